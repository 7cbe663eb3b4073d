"""Form and multipart bodies from session.toml reach a real FastAPI app (its own Form and
UploadFile parsing is the judge), with the session marker intact; and `plimsoll check`
against a form endpoint sent JSON names the field and the fix, not "never called the mock".
"""

import os
import pathlib
import subprocess
import sys

from conftest import BIN, ROOT

APP = ROOT / "tests" / "conformance" / "apps" / "form_agent.py"
MARKER = "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]]"


def check(tmp: pathlib.Path, session: str):
    (tmp / "plimsoll.toml").write_text(
        f'[sut]\ncommand = ["{sys.executable}", "{APP}"]\nready = "http"\nready_path = "/health"\n'
        'ready_timeout_s = 30\n[session]\nfile = "session.toml"\n[step]\ntimeout_s = 60\n'
    )
    (tmp / "session.toml").write_text(session)
    (tmp / "cat.png").write_bytes(bytes([137, 80, 78, 71, 13, 10, 26, 10]))
    p = subprocess.run([BIN, "check", "--no-partition"], cwd=tmp, capture_output=True, text=True,
                       timeout=120, env={**os.environ})
    return p.returncode, p.stderr


def test_form_fields_reach_fastapi_form_parsing(tmp_path):
    code, err = check(tmp_path, f'''turns = 2
url = "{{{{base}}}}/runs"
form = {{ message = "{MARKER} hello & bye", session_id = "{{{{uuid}}}}", stream = false }}
[[check]]
pointer = "/stream"
equals = false
[[check]]
pointer = "/message"
contains = " nonce=psn"
[[check]]
pointer = "/message"
contains = "]] hello & bye"
''')
    assert code == 0, err
    assert "OK: 4 turns went through in 2 sessions side by side; the SUT called the mock 4 times" in err, err


def test_multipart_parts_reach_fastapi_upload_parsing(tmp_path):
    code, err = check(tmp_path, f'''turns = 1
url = "{{{{base}}}}/upload"
multipart = {{ message = "{MARKER} look", image = {{ path = "cat.png" }}, blob = {{ bytes = 65536, filename = "x.bin" }} }}
[[check]]
pointer = "/image/filename"
equals = "cat.png"
[[check]]
pointer = "/image/content_type"
equals = "image/png"
[[check]]
pointer = "/image/head"
equals = "89504e47"
[[check]]
pointer = "/blob/size"
equals = 65536
[[check]]
pointer = "/blob/content_type"
equals = "application/octet-stream"
[[check]]
pointer = "/message"
contains = "]] look"
''')
    assert code == 0, err


def test_json_sent_to_a_form_endpoint_gets_the_form_hint(tmp_path):
    code, err = check(tmp_path, f'''turns = 1
url = "{{{{base}}}}/runs"
body = '{{"message": "{MARKER} hi", "session_id": "{{{{uuid}}}}", "stream": false}}'
[headers]
content-type = "application/json"
''')
    assert code == 3, err
    assert "1 problem:" in err, err
    assert "the SUT names body.message: Field required" in err, err
    assert "this endpoint may take form fields: `form = { message = \"…\"" in err, err
    assert "never called the mock" not in err, err
