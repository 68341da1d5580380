"""The Kubernetes examples: every manifest valid against the Kubernetes schemas (kubernetes-validate, strict), the
ConfigMap holding exactly what the pods read, what it holds loading in rdmatool, the image the Dockerfile builds,
and the DaemonSet's check script marking a node as its rules say (kubectl and the gate played by recorders)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from rdmatool import inventory
from rdmatool.gate import profile as gate_profile

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "examples" / "kubernetes"
KUBERNETES_VERSION = "1.30"
VERSION = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)


def _documents() -> list[tuple[str, dict]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += [(path.name, d) for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return docs


DOCS = _documents()
CONFIG = next(d for _, d in DOCS if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "rdmatool-config")


def _pod_specs() -> list[tuple[str, dict]]:
    specs = []
    for name, doc in DOCS:
        if doc["kind"] == "Pod":
            specs.append((name, doc["spec"]))
        elif doc["kind"] in ("Job", "DaemonSet"):
            specs.append((name, doc["spec"]["template"]["spec"]))
    return specs


def _containers(spec: dict) -> list[dict]:
    return spec.get("initContainers", []) + spec["containers"]


def _rdmatool_containers() -> list[tuple[str, dict, dict]]:
    return [(name, spec, c) for name, spec in _pod_specs() for c in _containers(spec) if "rdmatool" in c["image"]]


def test_there_is_a_job_a_daemonset_and_the_configmap() -> None:
    assert {d["kind"] for _, d in DOCS} >= {"ConfigMap", "Job", "DaemonSet", "ServiceAccount", "ClusterRole",
                                            "ClusterRoleBinding", "Pod"}


@pytest.mark.parametrize(("file", "doc"), DOCS, ids=[f"{n}:{d['kind']}" for n, d in DOCS])
def test_manifest_is_valid_kubernetes(file: str, doc: dict) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_a_bad_manifest_is_refused() -> None:
    """The validation can fail: a misspelt field in a pod spec."""
    job = json.loads(json.dumps(next(d for _, d in DOCS if d["kind"] == "Job")))
    job["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)


def test_the_configmap_holds_exactly_what_the_pods_read() -> None:
    read: set[str] = set()
    for _, spec, container in _rdmatool_containers():
        words = " ".join(container.get("command", []) + container.get("args", []))
        if "/config/" not in words:
            continue  # reads no configuration (the merge Job: bundles only)
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert volumes[mounts["/config"]]["configMap"]["name"] == "rdmatool-config"
        read |= set(re.findall(r"/config/([\w.-]+)", words))
    script = CONFIG["data"]["node-check.sh"]
    read |= set(re.findall(r"/config/([\w.-]+)", script))
    assert read == set(CONFIG["data"]), (read, set(CONFIG["data"]))


def _local(container: dict) -> bool:
    """A node check: `gate --local` itself, or the DaemonSet's script that runs it."""
    words = container.get("command", []) + container.get("args", [])
    return "--local" in words or "/config/node-check.sh" in words


def test_the_node_checks_read_their_own_node_with_no_key_inventory_or_known_hosts() -> None:
    checks = [(name, spec, c) for name, spec, c in _rdmatool_containers() if _local(c)]
    assert sorted(name for name, _, _ in checks) == ["daemonset.yaml", "init-container.yaml"]
    for name, spec, container in checks:
        words = " ".join(container.get("command", []) + container.get("args", []))
        assert not any("secret" in v for v in spec["volumes"]), name
        assert not any(m["mountPath"].startswith("/secrets") for m in container["volumeMounts"]), name
        assert "-i " not in words and "--known-hosts" not in words and "inventory" not in words, name
        assert container["securityContext"].get("runAsNonRoot", spec["securityContext"].get("runAsNonRoot")), name
    script = CONFIG["data"]["node-check.sh"]
    [gate] = [line for line in script.splitlines() if '"$RDMATOOL" gate' in line]
    assert gate.split()[1:4] == ["gate", "--local", "--profile"] and "/config/node-profile.yaml" in gate
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert "ssh" not in code.lower() and "known_hosts" not in code and "inventory" not in code
    # the DaemonSet's pod reads the node's netdevs: it lives in the node's network namespace
    daemonset = next(d for _, d in DOCS if d["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    assert daemonset["hostNetwork"] is True and daemonset["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_the_ssh_key_is_where_the_inventory_says_and_readable_by_the_pods() -> None:
    identity = yaml.safe_load(CONFIG["data"]["inventory.yaml"])["defaults"]["identity_file"]
    for name, spec, container in _rdmatool_containers():
        if _local(container):
            continue  # reads its own node: no key (above)
        if not any(m["mountPath"] == "/config" for m in container["volumeMounts"]):
            # no inventory, so no host to reach (the merge Job reads bundles only): no key either
            assert not any("secret" in v for v in spec["volumes"]), name
            continue
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        secret = next(v for v in spec["volumes"] if "secret" in v)
        assert identity.startswith(mounts[secret["name"]] + "/"), name
        assert secret["secret"]["secretName"] == "rdmatool-ssh-key"
        # the image runs as uid 10001: the key is readable through the pod's fsGroup, by nobody else
        assert spec["securityContext"]["fsGroup"] == 10001 and secret["secret"]["defaultMode"] == 0o440, name


def test_what_the_configmap_holds_loads_in_rdmatool(tmp_path: Path) -> None:
    (tmp_path / "inventory.yaml").write_text(CONFIG["data"]["inventory.yaml"])
    targets = inventory.load(str(tmp_path / "inventory.yaml"))
    assert {t.name for t in targets} >= {"gpu001", "gpu032", "leaf01"}
    for key in ("gate-profile.yaml", "node-profile.yaml"):
        (tmp_path / key).write_text(CONFIG["data"][key])
        gate_profile.load(tmp_path / key)
    assert not gate_profile.load(tmp_path / "node-profile.yaml").bandwidth.enabled
    assert gate_profile.load(tmp_path / "gate-profile.yaml").bandwidth.enabled


def test_every_pod_runs_the_image_the_dockerfile_builds() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert f"docker build -t rdmatool:{VERSION} ." in dockerfile
    assert "ENV PATH=/opt/rdmatool/bin:$PATH" in dockerfile and "USER 10001" in dockerfile
    for name, _, container in _rdmatool_containers():
        assert container["image"] == f"rdmatool:{VERSION}", name
        program = (container.get("command") or ["rdmatool"])[0]
        assert program in ("/opt/rdmatool/bin/rdmatool", "/bin/sh"), name


def test_the_daemonset_tolerates_its_own_taint_and_may_patch_nodes() -> None:
    daemonset = next(d for _, d in DOCS if d["kind"] == "DaemonSet")
    spec = daemonset["spec"]["template"]["spec"]
    assert {"key": "rdmatool.io/fabric", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    role = next(d for _, d in DOCS if d["kind"] == "ClusterRole")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    binding = next(d for _, d in DOCS if d["kind"] == "ClusterRoleBinding")
    assert binding["subjects"][0]["name"] == spec["serviceAccountName"]
    env = {e["name"]: e for e in spec["containers"][0]["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"


# --- node-check.sh, run once with a recorded kubectl and a stand-in gate ---------------------------------------

# A local gate names the machine by its host name, which need not be the node's name: its findings are the node's.
FINDING = {"rule": "port_not_active", "severity": "error", "target": "ip-10-0-0-7", "entity": "mlx5_0/1",
           "symptom": "RDMA port mlx5_0/1 on ip-10-0-0-7 is not Active (state Down)"}


def _node_check(tmp_path: Path, code: int, payload: dict | None, fail_closed: str = "no") -> tuple[int, list, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    kubectl = bin_dir / "kubectl"
    kubectl.write_text("#!/bin/sh\nprintf '%s|' \"$@\" >> \"$KUBECTL_LOG\"; echo >> \"$KUBECTL_LOG\"\n")
    kubectl.chmod(0o755)
    gate = bin_dir / "rdmatool"
    (tmp_path / "payload.json").write_text(json.dumps(payload) if payload is not None else "")
    gate.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'argv'}\ncat {tmp_path / 'payload.json'}\n"
                    f"echo 'last line of stderr' >&2\nexit {code}\n")
    gate.chmod(0o755)
    script = tmp_path / "node-check.sh"
    script.write_text(CONFIG["data"]["node-check.sh"])
    log = tmp_path / "kubectl.log"
    log.unlink(missing_ok=True)
    result = subprocess.run(["/bin/sh", str(script)], capture_output=True, text=True, timeout=60, env={
        "PATH": f"{bin_dir}:/usr/bin:/bin", "NODE_NAME": "gpu007", "ONCE": "1", "TMPDIR": str(tmp_path),
        "KUBECTL_LOG": str(log), "FAIL_CLOSED": fail_closed})
    calls = [line.rstrip("|").split("|") for line in log.read_text().splitlines()] if log.exists() else []
    return result.returncode, calls, result.stderr


def test_node_check_taints_labels_and_gives_the_reason_on_a_failure(tmp_path: Path) -> None:
    code, calls, stderr = _node_check(tmp_path, 1, {"verdict": "fail", "drain": ["ip-10-0-0-7"],
                                                    "findings": [FINDING]})
    assert code == 1
    assert (tmp_path / "argv").read_text().split() == ["gate", "--local", "--profile", "/config/node-profile.yaml",
                                                       "--budget", "60", "--json"]
    assert calls == [
        ["taint", "nodes", "gpu007", "rdmatool.io/fabric=fail:NoSchedule", "--overwrite"],
        ["label", "nodes", "gpu007", "rdmatool.io/fabric=fail", "--overwrite"],
        ["annotate", "nodes", "gpu007",
         "rdmatool.io/reason=port_not_active: RDMA port mlx5_0/1 on ip-10-0-0-7 is not Active (state Down)",
         "--overwrite"],
    ]
    assert "failed; tainted" in stderr


def test_node_check_removes_only_its_own_taint_on_a_pass(tmp_path: Path) -> None:
    code, calls, _ = _node_check(tmp_path, 0, {"verdict": "pass", "drain": [], "findings": []})
    assert code == 0
    assert calls == [["taint", "nodes", "gpu007", "rdmatool.io/fabric=fail:NoSchedule-"],
                     ["label", "nodes", "gpu007", "rdmatool.io/fabric=pass", "--overwrite"],
                     ["annotate", "nodes", "gpu007", "rdmatool.io/reason-"]]
    assert not any("cordon" in c or "uncordon" in c for call in calls for c in call)


@pytest.mark.parametrize(("code", "payload", "fail_closed", "tainted"), [
    (3, {"verdict": "inconclusive"}, "yes", False),       # a monitoring gap: nothing changed, logged
    (1, None, "no", False),                                 # a traceback's exit 1 is not a verdict
    (1, None, "yes", True),                                 # ... unless told to fail closed
    (2, None, "no", False),
])
def test_node_check_without_a_failing_verdict(tmp_path: Path, code: int, payload, fail_closed: str,  # noqa: ANN001
                                              tainted: bool) -> None:
    returned, calls, stderr = _node_check(tmp_path, code, payload, fail_closed)
    assert returned == code
    assert bool(calls) == tainted
    if tainted:
        assert calls[-1][3] == f"rdmatool.io/reason=cannot run: exit {code} without a verdict"
    assert "last line of stderr" in stderr
