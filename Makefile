# Entry points. Each target installs what is missing (Debian packages) and builds first.
#   make demo       simulate one cycle on the built-in KubeVirt example (no cluster needed)
#   make check      the quick loop: layers, unit tests, conformance vectors and the offline
#                   CLI scripts (about a minute and a half; docs/HACKING.md)
#   make test       every test suite (unit, sanitizers, upstream conformance, CLI, API simulator,
#                   the real kube-apiserver tier)
#   make test-realapi  only the real kube-apiserver tier (tests/realapi; builds kube-apiserver
#                   from the Go module proxy once per machine)
#   make test-helm  only the Helm chart's tests (tests/helm; builds Helm likewise)
#   make build      just build build/descheduler
#   make lab        the cluster lab: SCENARIO=NAME (default: every scenario) with our binary,
#                   or BINARY=PATH; writes tests/lab/out/NAME-ours.{json,html} (docs/lab.md)
#   make lab-compare  each of SCENARIOS (default: all five) with ours and with upstream's
#                   descheduler; writes tests/lab/out/compare.json and prints the table
#   make lab-faults  control-plane faults in the cluster lab (kube-apiserver, etcd, virt-controller,
#                   virt-api, a node going NotReady; about five minutes, so not in make test);
#                   fails when the section "Control-plane faults (cluster lab)" of
#                   docs/fault-matrix.md differs from the run; WRITE=1 rewrites it
#   make bench      benchmarks, then upstream's descheduler beside ours at 500/15k and 5k/150k
#                   (print figures; about 18 minutes, see docs/performance.md)
#   make bench-realapi  upstream's descheduler beside ours against a real kube-apiserver loaded
#                   by tests/lab/scale.py: one-shot, Deployment mode with churn, the server's own
#                   costs, a server restart; SIZES="500:15000 5000:150000" (default 500:15000);
#                   writes bench/out/realapi.json (docs/performance.md)
#   make demo-live  start the API simulator on the example cluster
#   make demo-openshift  the OpenShift KubeDescheduler example live: simulator + real Prometheus, one cycle
BUILD ?= build
EXAMPLE = examples/kubevirt-rebalance

.PHONY: all build deps demo check test lab lab-compare lab-faults test-realapi test-helm release test-release soak bench bench-realapi demo-live demo-openshift clean format

all: build

deps:
	@scripts/deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j2 -- --no-print-directory

demo: build
	$(BUILD)/descheduler simulate --policy-config-file $(EXAMPLE)/policy.yaml \
	  --snapshot $(EXAMPLE)/cluster.json --feature-gates EvictionsInBackground=true --v 3

check: build
	@scripts/deps.sh test
	@tests/check.sh

test:
	@tests/run-all.sh

SCENARIO ?=
SCENARIOS ?= runbook openshift skewed pingpong pinned
BINARY ?=

lab: build
	@scripts/deps.sh test
	@tests/lab/build.sh
	@for s in $(or $(SCENARIO),$(SCENARIOS)); do \
	  python3 tests/lab/run.py $$s $(if $(BINARY),--binary $(BINARY)) || exit 1; done

lab-compare: build
	@scripts/deps.sh test
	@tests/lab/build.sh
	@bench/upstream.sh
	@python3 tests/lab/compare.py --scenarios "$(SCENARIOS)" $(if $(BINARY),--binary $(BINARY))

lab-faults: build
	@scripts/deps.sh test
	@tests/lab/build.sh
	@python3 tests/lab/faults.py $(if $(BINARY),--binary $(BINARY)) $(if $(WRITE),--write)

test-realapi: build
	@scripts/deps.sh test
	@tests/realapi/run.sh

test-helm: build
	@scripts/deps.sh test
	@tests/realapi/build.sh >/dev/null || true
	@tests/helm/test.sh

# dist/: tarball, .deb, OCI image archive, SPDX SBOM, SHA256SUMS (scripts/release.sh)
release: build
	@scripts/deps.sh test
	@BUILDAH_OPTS="$${BUILDAH_OPTS:---storage-driver vfs}" scripts/release.sh

test-release: build
	@scripts/deps.sh test
	@tests/release/test.sh

# a long Deployment-mode run under churn, API faults and policy reloads (tests/soak/soak.py)
DURATION ?= 2h
soak: build
	@scripts/deps.sh test
	@python3 tests/soak/soak.py --duration $(DURATION)

bench: build
	@scripts/deps.sh bench
	@bench/run.sh

# kube-apiserver, KWOK (tests/lab) and upstream's descheduler are built once per machine
SIZES ?= 500:15000
bench-realapi: build
	@scripts/deps.sh test
	@tests/realapi/build.sh
	@tests/lab/build.sh
	@bench/upstream.sh
	@python3 bench/realapi.py --sizes "$(SIZES)"

demo-live: build
	@scripts/deps.sh test
	@tests/apisim/demo-live.sh $(EXAMPLE)/cluster.json

demo-openshift: build
	@scripts/deps.sh test
	@tests/apisim/demo-openshift.sh $(BUILD)/descheduler

clean:
	rm -rf build build-asan dist

format:
	clang-format -i src/*/*.c src/*/*.h tests/unit/*.c tests/unit/support/*.[ch]
