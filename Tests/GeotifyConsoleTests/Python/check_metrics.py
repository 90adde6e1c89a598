"""Scrapes /metrics from the console and parses it with prometheus_client's own
text-format parser: every family must parse, carry HELP and TYPE, follow Prometheus'
naming (geotify_ prefix, counters ending in _total) and hold the samples the fixture
produced. Usage: check_metrics.py fixture|bridge BINARY. Exits non-zero with the reason."""

import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean of __pycache__

from prometheus_client.parser import text_string_to_metric_families

from console_backends import BridgeBackend, FixtureBackend


def main():
    backend = {"fixture": FixtureBackend, "bridge": BridgeBackend}[sys.argv[1]](sys.argv[2])
    try:
        backend.move("alice/phone", 52.0, 13.0, 1_700_000_000)
        backend.move("alice/phone", 52.52, 13.405, 1_700_000_100)
        backend.request("POST", "pub", b"{not json", headers={"X-Limit-U": "alice", "X-Limit-D": "phone"})
        # The bridge evaluates what arrives over MQTT on its own time: scrape until the
        # three messages are counted (bounded), then check everything.
        deadline = time.time() + 30
        while True:
            status, body = backend.request("GET", "metrics", user="prometheus")
            assert status == 200, f"/metrics answered {status}"
            text = body.decode()
            if "geotify_fixes_evaluated_total 2" in text and 'geotify_errors_total{kind="invalid_json"} 1' in text:
                break
            assert time.time() < deadline, f"the positions were not all counted:\n{text}"
            time.sleep(0.05)
        types = {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}
        helps = {line.split()[2] for line in text.splitlines() if line.startswith("# HELP ")}
        families = {family.name: family for family in text_string_to_metric_families(text)}
        assert families, "no metric families"
        for name, kind in types.items():
            assert name.startswith("geotify_"), f"{name} lacks the geotify_ prefix"
            assert name in helps, f"{name} has no HELP"
            if kind == "counter":
                assert name.endswith("_total"), f"counter {name} does not end in _total"
        samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
                   for family in families.values() for sample in family.samples}
        assert samples[("geotify_fixes_evaluated_total", ())] == 2, samples
        assert samples[("geotify_notifications_total", ())] == 1, samples
        assert samples[("geotify_errors_total", (("kind", "invalid_json"),))] == 1, samples
        assert samples[("geotify_healthy", (("check", "broker"),))] == 1, samples
        assert families["geotify_evaluation_latency_seconds"].type == "histogram"
        assert samples[("geotify_evaluation_latency_seconds_bucket", (("le", "+Inf"),))] >= 3, samples
        print(f"{len(families)} families, {len(samples)} samples parsed")
    finally:
        backend.stop()


if __name__ == "__main__":
    main()
