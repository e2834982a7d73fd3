"""The Kubernetes Pod Security Standards, "restricted" level (which includes "baseline"),
as checks over a pod spec: https://kubernetes.io/docs/concepts/security/pod-security-standards/
Each returned string names one violated rule; an empty list means the pod is admitted."""

from __future__ import annotations

from typing import Any

BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}


def violations(pod: dict[str, Any]) -> list[str]:
    out: list[str] = []
    psc = pod.get("securityContext") or {}
    containers = [
        *pod.get("containers", []),
        *pod.get("initContainers", []),
        *pod.get("ephemeralContainers", []),
    ]
    # Baseline
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field):
            out.append(f"host namespaces: {field}")
    if (psc.get("windowsOptions") or {}).get("hostProcess"):
        out.append("hostProcess")
    for sysctl in psc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"sysctl {sysctl.get('name')}")
    out += _selinux(psc, "pod")
    out += _apparmor(psc, "pod")
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if "hostPath" in kinds:
            out.append(f"hostPath volume {volume['name']}")
        # Restricted: only these volume types.
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"volume type {sorted(kinds)} of {volume['name']}")
    # Restricted, pod level
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type")
    if pod_seccomp not in (None, "RuntimeDefault", "Localhost"):
        out.append(f"pod seccompProfile {pod_seccomp}")
    if psc.get("runAsUser") == 0:
        out.append("pod runAsUser 0")
    for c in containers:
        name = c.get("name", "?")
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            out.append(f"{name}: privileged")
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            out.append(f"{name}: hostProcess")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                out.append(f"{name}: hostPort {port['hostPort']}")
        if sc.get("procMount", "Default") != "Default":
            out.append(f"{name}: procMount")
        out += _selinux(sc, name)
        out += _apparmor(sc, name)
        caps = sc.get("capabilities") or {}
        # Restricted: drop ALL, add at most NET_BIND_SERVICE (baseline: the default set).
        added = set(caps.get("add") or [])
        if not added <= BASELINE_CAPABILITIES:
            out.append(f"{name}: capabilities added beyond baseline {sorted(added)}")
        if not added <= {"NET_BIND_SERVICE"}:
            out.append(f"{name}: capabilities added {sorted(added)}")
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{name}: capabilities must drop ALL")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{name}: allowPrivilegeEscalation must be false")
        non_root = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if non_root is not True:
            out.append(f"{name}: runAsNonRoot must be true")
        if sc.get("runAsUser") == 0:
            out.append(f"{name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{name}: seccompProfile must be RuntimeDefault or Localhost")
    return out


def _selinux(sc: dict[str, Any], where: str) -> list[str]:
    options = sc.get("seLinuxOptions") or {}
    out = []
    if options.get("type", "") not in SELINUX_TYPES:
        out.append(f"{where}: seLinuxOptions.type")
    if options.get("user") or options.get("role"):
        out.append(f"{where}: seLinuxOptions user/role")
    return out


def _apparmor(sc: dict[str, Any], where: str) -> list[str]:
    kind = (sc.get("appArmorProfile") or {}).get("type")
    return (
        [f"{where}: appArmorProfile {kind}"]
        if kind not in (None, "RuntimeDefault", "Localhost")
        else []
    )
