"""URLs: fourdgs.open, fourdgs.stream and fourdgs.validate over HTTP (fourdgs_reader_open_url,
fourdgs_stream_open_url, fourdgs_validate_url; docs/remote.md).

Without a server: a closed port is an io error naming the URL ("http-connection"), or
"http-not-built" in a library built without libcurl. With $FOURDGS_HTTP_BASE set — ctest's
http.python runs this file under tests/http/harness.py, whose nginx serves the conformance
corpus at /corpus — files read over HTTP on both paths equal the local read, and a missing file
is "http-status" naming the 404.
"""
import os
import socket
from pathlib import Path

import numpy as np
import pytest

import fourdgs

BASE = os.environ.get("FOURDGS_HTTP_BASE")
needs_server = pytest.mark.skipif(not BASE, reason="no web server: ctest http.python runs this "
                                                   "file under tests/http/harness.py")
FILES = ["many-chunks", "kd-chained", "extras-audio-large", "summary-no-index", "sh-degree-3"]


@pytest.fixture
def no_proxy(monkeypatch):
    """libcurl honours the proxy variables; loopback requests must not go through one."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/scene.4dgs"


@pytest.mark.parametrize("call", [fourdgs.open, fourdgs.stream, fourdgs.validate],
                         ids=["open", "stream", "validate"])
def test_a_closed_port_is_an_io_error_naming_the_url(call, no_proxy):
    url = closed_port_url()
    with pytest.raises(fourdgs.Error) as e:
        call(url)
    if e.value.kind == "unsupported":  # a library built without libcurl
        assert e.value.refusal == "http-not-built"
    else:
        assert (e.value.kind, e.value.refusal) == ("io", "http-connection"), str(e.value)
        assert url in e.value.message


@needs_server
@pytest.mark.parametrize("name", FILES)
def test_a_url_reads_as_the_local_file(corpus, name, no_proxy):
    url, path = f"{BASE}/corpus/valid/{name}.4dgs", corpus / "valid" / f"{name}.4dgs"
    with fourdgs.open(url) as remote, fourdgs.open(path) as local:
        assert remote.name == url
        assert remote.header == local.header and remote.chunks == local.chunks
        for t in (0.0, local.header.duration_sec * 0.37):
            a, b = remote.evaluate(t), local.evaluate(t)
            assert np.array_equal(a.center, b.center) and np.array_equal(a.color, b.color)
        for i in range(len(local.audio_sources)):
            assert remote.audio_data(i) == local.audio_data(i)
    with fourdgs.stream(url) as remote, fourdgs.stream(path) as local:
        got, want = list(remote.blocks()), list(local.blocks())
        assert [b.chunk for b in got] == [b.chunk for b in want] and len(got) > 0
        assert all(np.array_equal(g.position, w.position) for g, w in zip(got, want))
        assert remote.summary_crc_verified == local.summary_crc_verified
    assert fourdgs.validate(url).findings == fourdgs.validate(path).findings


@needs_server
def test_a_missing_url_is_http_status(no_proxy):
    url = f"{BASE}/corpus/valid/no-such-file.4dgs"
    for call in (fourdgs.open, fourdgs.stream):
        with pytest.raises(fourdgs.Error) as e:
            call(url)
        assert (e.value.kind, e.value.refusal) == ("io", "http-status")
        assert "404" in e.value.message and url in e.value.message


@needs_server
@pytest.mark.parametrize("name", ["birth-deflate", "keyframe-delta-churn"])
def test_a_download_cut_inside_a_chunk_streams_the_blocks_before_it(data_dir, name, no_proxy):
    """A truncated file on the server, read front to back over HTTP: every block before the cut,
    then "truncated", as from the local file (the indexed open has no Footer to read)."""
    path = data_dir / f"{name}.4dgs"
    with fourdgs.open(path) as scene:
        last = max(scene.chunks, key=lambda c: c.offset)
    data = path.read_bytes()
    cut = data[:last.offset + last.size // 2]
    served = f"cut-{name}.4dgs"
    (Path(os.environ["FOURDGS_HTTP_ROOT"]) / served).write_bytes(cut)
    want = list(fourdgs.stream(data).blocks())[:-1]
    got = []
    with fourdgs.stream(f"{BASE}/{served}") as remote:
        with pytest.raises(fourdgs.Error) as e:
            for b in remote.blocks():
                got.append(b)
        assert (e.value.kind, e.value.refusal) == ("truncated", "truncated")
    assert len(got) == len(want) > 0
    assert all(g.chunk == w.chunk and np.array_equal(g.position, w.position)
               for g, w in zip(got, want))
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.open(f"{BASE}/{served}")
    assert e.value.kind in ("malformed", "truncated"), str(e.value)


# -- https and private servers (harness.py --tls: FOURDGS_HTTPS_BASE, its CA, an unrelated CA;
# the corpus again under /private/, only for requests with X-Fourdgs-Token) ---------------------

HTTPS = os.environ.get("FOURDGS_HTTPS_BASE")
needs_tls = pytest.mark.skipif(not HTTPS, reason="no https server: ctest http.python runs this "
                                                 "file under tests/http/harness.py --tls")


@needs_tls
@pytest.mark.parametrize("call", [fourdgs.open, fourdgs.stream], ids=["open", "stream"])
def test_https_with_the_test_ca_reads_as_the_local_file(corpus, call, no_proxy):
    http = {"ca_bundle": os.environ["FOURDGS_HTTPS_CA"], "max_attempts": 2,
            "connect_timeout_ms": 5000, "transfer_timeout_ms": 20000}
    name = "kd-chained"
    with call(f"{HTTPS}/corpus/valid/{name}.4dgs", http=http) as remote, \
            fourdgs.open(corpus / "valid" / f"{name}.4dgs") as local:
        if call is fourdgs.stream:
            assert sum(len(b) for b in remote.blocks()) > 0
        assert remote.header == local.header  # (a stream has no fetch costs to compare)
        assert [(c.offset, c.size, c.keyframe) for c in remote.chunks] == \
            [(c.offset, c.size, c.keyframe) for c in local.chunks]


@needs_tls
@pytest.mark.parametrize("call", [fourdgs.open, fourdgs.stream], ids=["open", "stream"])
def test_https_with_a_wrong_ca_is_tls_verification_failed(call, no_proxy):
    url = f"{HTTPS}/corpus/valid/kd-chained.4dgs"
    with pytest.raises(fourdgs.Error) as e:
        call(url, http={"ca_bundle": os.environ["FOURDGS_HTTPS_WRONG_CA"]})
    assert (e.value.kind, e.value.refusal) == ("io", "tls-verification-failed"), str(e.value)
    with call(url, http={"verify_tls": False}) as scene:  # unchecked, on purpose
        assert scene.header.duration_sec > 0


@needs_tls
def test_a_private_server_wants_the_header_option(corpus, no_proxy):
    url = f"{BASE}/private/valid/many-chunks.4dgs"
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.open(url)
    assert (e.value.kind, e.value.refusal) == ("io", "http-status") and "403" in e.value.message
    http = {"headers": ["X-Fourdgs-Token: " + os.environ["FOURDGS_HTTP_TOKEN"]]}
    with fourdgs.open(url, http=http) as remote, \
            fourdgs.open(corpus / "valid" / "many-chunks.4dgs") as local:
        t = local.header.duration_sec * 0.37
        assert np.array_equal(remote.evaluate(t).center, local.evaluate(t).center)
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.open(url, http={"header": []})
    assert e.value.refusal == "invalid-option"
