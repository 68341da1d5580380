"""The container image can read on a node what the host script reads there: the Debian packages of its tools."""

from __future__ import annotations

import re

from rdmatool.cli.doctor_cmd import SCRIPT_TOOLS
from tests.helpers import REPO

# The packages Debian's main archive ships (mlnx-tools and lldpd are vendor tools or host daemons a pod
# cannot use), under the names the runtime stage installs.
DEBIAN = {"ibverbs-utils / libibverbs-utils": "ibverbs-utils"}  # doctor names both spellings


def _runtime_packages() -> set[str]:
    text = (REPO / "Dockerfile").read_text()
    runtime = text.rsplit("\nFROM ", 1)[1]  # the last stage is the image; the first only builds the venv
    install = re.search(r"apt-get install -y --no-install-recommends((?:[^&]|\\\n)*)&&", runtime)
    assert install, "the runtime stage installs no Debian package"
    return set(install.group(1).replace("\\\n", " ").split())


def test_the_image_installs_the_packages_of_the_node_tools() -> None:
    wanted = {DEBIAN.get(package, package) for _, package in SCRIPT_TOOLS
              if package in {"infiniband-diags", "ethtool", "ibverbs-utils / libibverbs-utils"}}
    assert wanted == {"infiniband-diags", "ibverbs-utils", "ethtool"}
    assert wanted <= _runtime_packages()


def test_only_curl_is_purged_after_kubectl_is_fetched() -> None:
    runtime = (REPO / "Dockerfile").read_text().rsplit("\nFROM ", 1)[1]
    purged = re.search(r"apt-get purge -y ([^&]*)&&", runtime)
    assert purged and purged.group(1).split() == ["curl"]
