"""A second held-back paraphrase set for hybrid retrieval, written blind.

The first held-back half (`bench.paraphrase.PAIRS[1::2]`) was looked at while the
similarity floor was being set, so it became tuning data. These pairs and distractors were
written afterwards, before any model or retrieval was run on them, and are evaluated once:
nothing here is to be edited after a score has been seen.

Same style as `bench.paraphrase`: a personal fact a user would tell an assistant, and a
natural question asking for it that shares no content word with it (after stemming, stop
words left out). Topics are away from the first set's. The distractors are personal
statements of the same kind, none answering a question here; some share words with the
questions, as in a real memory store.

The held-back store holds every memory of both sets (old pairs, old distractors, these
pairs and these distractors); only these questions are scored on it.
"""

from __future__ import annotations

from bench import paraphrase

HELD_BACK_V2_PAIRS: list[tuple[str, str]] = [
    ("Our golden retriever Biscuit turned nine in July", "what age has our pup reached"),
    ("Penicillin gives me a bad rash", "which antibiotic should doctors avoid prescribing me"),
    ("My grandmother lives in a care home in Galway", "where does my nan stay these days"),
    (
        "I throw pots on a wheel at a ceramics studio on Wednesdays",
        "what clay craft do I practise midweek",
    ),
    ("My blood type is O negative", "what transfusion group am I"),
    ("My passport expires in February 2027", "when does my travel document run out"),
    ("We keep three hens for fresh eggs", "what poultry do we raise"),
    (
        "My niece Sofia is studying veterinary medicine in Edinburgh",
        "what is my brother's daughter training to become",
    ),
    ("I had my appendix removed when I was twelve", "what surgery did I undergo as a child"),
    ("I sing tenor in a barbershop quartet", "what vocal part do I take in my harmony group"),
    (
        "My manager Margaret runs the procurement department",
        "who is my supervisor at the company",
    ),
    ("Our holiday cottage is in Cornwall near St Ives", "where is the seaside house we own"),
    ("I wear a size 44 shoe", "how large are my feet"),
    ("I'm five foot nine", "how tall am I"),
    ("My favourite film is Spirited Away", "which movie do I rate highest"),
    ("I've been sober for six years", "how long since my last alcoholic drink"),
    (
        "I take levothyroxine every morning for my thyroid",
        "what medication do I swallow daily",
    ),
    ("Our twins start primary school in September", "when do the kids begin their education"),
    ("I own a 1967 Vespa scooter", "what two-wheeler do I ride"),
    ("I'm a certified scuba diver", "what underwater sport am I qualified for"),
    (
        "My father-in-law is a retired pilot",
        "what did my wife's dad do before he stopped working",
    ),
    (
        "We are planning a road trip across Iceland next summer",
        "where are we driving on holiday",
    ),
    ("I have a tattoo of a compass on my forearm", "what ink is on my arm"),
    ("My favourite colour is teal", "which shade do I like best"),
    ("I suffer from hay fever every spring", "what seasonal allergy bothers me"),
    ("I'm a Catholic and go to Mass on Sundays", "what religion do I practise"),
    ("I teach yoga part-time at the community centre", "what side job do I have"),
    (
        "Our mortgage is with Nationwide and has 22 years left",
        "which bank lent us money for the home",
    ),
    ("I'm trying to lose ten kilos this year", "what weight goal have I set"),
    (
        "My grandson Leo took his first steps last week",
        "what milestone did the baby reach recently",
    ),
    (
        "I was a lifeguard at a public pool during university",
        "what summer job did I have as a student",
    ),
    (
        "I play bridge with three retired teachers on Thursdays",
        "what card game do I join weekly",
    ),
    (
        "Our parrot Kiwi can say hello and whistle the national anthem",
        "what talking bird do we have",
    ),
    ("I hike up Ben Nevis every year on my birthday", "which mountain do I climb annually"),
    (
        "My sister-in-law runs a florist shop in Leeds",
        "what business does my brother's wife own",
    ),
    (
        "I'm dyslexic and reading long documents takes me ages",
        "what learning difficulty do I have",
    ),
    ("My engagement ring belonged to my great-aunt", "whose jewellery did I inherit"),
    ("I retire from the civil service in 2029", "when do I stop working for the government"),
    (
        "I coach my daughter's under-11 netball team",
        "which youth sports squad do I train",
    ),
    ("We're expecting our first baby in April", "when is the due date for our child"),
    ("I can't stand horror films", "which movie genre do I avoid"),
    (
        "I've been wearing hearing aids since my forties",
        "what device helps me with my ears",
    ),
    (
        "My childhood best friend Nadia now lives in Montreal",
        "where did my oldest pal end up",
    ),
    ("I make sourdough bread every weekend", "what do I bake on Saturdays and Sundays"),
    ("I'm a member of the local rowing club", "which water sport team have I joined"),
    (
        "I keep the spare house key under the blue flowerpot",
        "where can I find a way in if I'm locked out",
    ),
    ("My favourite snack is salted cashews", "which nuts do I munch between meals"),
    ("I earn about sixty thousand a year", "what is my salary"),
    (
        "I'm the treasurer of our residents' association",
        "what role do I hold on the tenants' committee",
    ),
    ("My favourite podcast is Radiolab", "which audio show do I follow"),
    ("We have solar panels on our roof", "how does our home generate electricity"),
    ("My driving test is on the 9th of January", "when is my road exam"),
    ("Our cleaner comes every second Thursday", "how often does the housekeeper visit"),
]

HELD_BACK_V2_DISTRACTORS: list[str] = [
    "I walked the neighbours' dog while they were in Spain",
    "My cousin's puppy chewed through my trainers",
    "I went to the doctor about a sore knee in March",
    "The pharmacy near work closes at six on Saturdays",
    "I visited my nan's old village on the way back from the coast",
    "I bought a set of mugs from a craft fair",
    "I gave blood once at university and fainted",
    "I lost my driving licence and had to order a new one",
    "We had chicken curry at the Indian place on Friday",
    "My brother is thinking about buying a camper van",
    "My daughter wants to paint her bedroom purple",
    "I watched a documentary about heart surgery",
    "I listened to a choir concert in the cathedral",
    "The company changed its logo again",
    "My supervisor at my first job was very kind",
    "We stayed in a house by the sea in Wales once",
    "I need new running shoes before the autumn",
    "I measured the hallway for a new carpet",
    "I went to the cinema with friends last Saturday",
    "I had a glass of wine at my cousin's leaving party",
    "I forgot to take my umbrella this morning",
    "The kids built a snowman in the park",
    "I rode a camel on a trip to Morocco",
    "I watched a video about coral reefs",
    "My wife's dad loves crossword puzzles",
    "We drove to the airport at five in the morning",
    "I have a small mark on my arm from a vaccination",
    "I repainted the bathroom a light grey",
    "My eyes get itchy when I dust the bookshelves",
    "I went to a friend's christening at a church in town",
    "I helped a friend move flat on Sunday",
    "I paid off my credit card last month",
    "I weighed the suitcase before the flight",
    "The baby next door cries a lot at night",
    "I had a summer cold that lasted two weeks",
    "We played cards at my aunt's house at Christmas",
    "I saw a heron by the canal this morning",
    "I climbed the stairs to the top of the lighthouse",
    "My brother's wife is from Poland",
    "I read a novel about a lighthouse keeper",
    "I found my grandfather's old pocket watch in the attic",
    "I filled in a form for the council about the bins",
    "I trained a new colleague on the booking system",
    "My friend's child is due to start nursery",
    "We argued about which film to watch on Saturday night",
    "My ears popped on the flight to Malaga",
    "I met an old friend for lunch in town",
    "I bought croissants from the bakery this morning",
    "I swam in the lake near the campsite",
    "I locked myself out of the car at the supermarket",
    "We ordered mixed nuts and olives at the bar",
    "I asked my landlord to fix the heating",
    "I joined a committee to plan the street party",
    "I followed a recipe from a cooking show",
    "The electricity bill went up this quarter",
    "I took the bus to the exam centre",
    "The housekeeper at the hotel left a chocolate on the pillow",
    "I signed up for a pottery evening class but never went",
    "I watched the rowing on television",
    "My colleague's parrot bit his finger",
    "I hate the smell of fresh paint",
    "I keep a spare phone charger in my bag",
    "I sold my old bike on an online marketplace",
    "We planted a cherry tree in the front garden",
    "I went to a wedding in a barn in Somerset",
    "I fell asleep on the sofa watching the news",
    "The school sent a letter about head lice",
    "I booked a table for my parents' anniversary dinner",
    "I cooked a roast for eight people on Sunday",
    "I forgot my friend's birthday and sent flowers late",
    "I tried paddleboarding on holiday and fell in",
    "My boss asked me to cover a colleague's shift",
    "The roof of the shed leaks when it rains hard",
    "I bought a second-hand bookcase for the study",
    "I lent my ladder to the people across the road",
    "I had a long chat with my cousin on the phone",
    "I picked up a parcel from the post office",
    "I tidied the garage and found my old skateboard",
    "I made a playlist for the drive to Scotland",
    "I had to wait an hour at the bank to open an account",
    "I watched a game of bridge on a video once and didn't understand it",
    "I took my nephew to the zoo",
    "I went to a jazz night at a bar in the city centre",
    "We got a new kettle because the old one broke",
    "I moved my desk closer to the window",
    "The car park at the hospital is always full",
    "I sent my cv to a recruitment agency",
    "I tried a spin class and my legs ached for days",
    "I cleaned the oven before my parents came over",
    "My flatmate plays loud music on weekends",
    "I spilled coffee on my keyboard",
    "I went to a talk about local history at the library",
    "We had a picnic by the river in June",
    "My friend is training to become a paramedic",
    "I bought my mum a scarf for her birthday",
    "I renewed my gym membership for another year",
    "I watched the fireworks from the hill behind our house",
    "My sister's boyfriend works in insurance",
    "I learnt to change a tyre on a youtube video",
    "I found a twenty pound note in an old coat",
    "My uncle teaches history at a college in Bristol",
    "I volunteered to bake a cake for the school fair",
    "We hired a van to take old furniture to the tip",
    "I set an alarm to water the plants",
    "I tried a Korean restaurant near the station",
    "I wrote a complaint to the train company",
    "I got a parking ticket outside the dentist",
    "I borrowed a drill from my neighbour to hang shelves",
    "I went fruit picking with my nieces in August",
    "I watched a documentary about mountain rescue teams",
]


def heldback_store() -> list[str]:
    """Every memory of both sets, in insertion order: the held-back questions are asked of
    this store."""
    return (
        [m for m, _ in paraphrase.PAIRS]
        + paraphrase.distractors()
        + [m for m, _ in HELD_BACK_V2_PAIRS]
        + HELD_BACK_V2_DISTRACTORS
    )
