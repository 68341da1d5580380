# The rdmatool image: the command line and its playbooks in a venv at /opt/rdmatool (where the README installs
# rdmatool for services), plus kubectl for the DaemonSet of examples/kubernetes/. It lives at the top of the
# checkout because the image is built from the whole package (pyproject.toml, rdmatool/, playbooks/), not only for
# Kubernetes:
#   docker build -t rdmatool:0.1.0 .        (the tag the manifests in examples/kubernetes/ use)
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rdmatool/ rdmatool/
COPY playbooks/ playbooks/
RUN python -m venv /opt/rdmatool && /opt/rdmatool/bin/pip install --no-cache-dir .

FROM python:3.11-slim
ARG KUBECTL_VERSION=v1.30.2
ARG TARGETARCH=amd64
# The node check (`gate --local`) reads what the host script reads: ibstat, perfquery and iblinkinfo
# (infiniband-diags), ibv_devinfo (ibverbs-utils) and ethtool -S; without them it sees sysfs alone.
# kubectl taints and labels the nodes the DaemonSet finds failing; it is checked against the release's checksum
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
        ethtool infiniband-diags ibverbs-utils \
    && curl -fsSLo /usr/local/bin/kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl" \
    && curl -fsSLo /tmp/kubectl.sha256 "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl.sha256" \
    && echo "$(cat /tmp/kubectl.sha256)  /usr/local/bin/kubectl" | sha256sum -c - \
    && chmod 0755 /usr/local/bin/kubectl \
    && apt-get purge -y curl && apt-get autoremove -y && rm -rf /var/lib/apt/lists/* /tmp/kubectl.sha256
COPY --from=build /opt/rdmatool /opt/rdmatool
ENV PATH=/opt/rdmatool/bin:$PATH
# Not root: rdmatool only reads, over SSH, with the key the pods mount from a Secret (fsGroup 10001 reads it).
RUN useradd --system --uid 10001 --gid 0 --home-dir /home/rdmatool --create-home rdmatool
USER 10001
ENTRYPOINT ["rdmatool"]
