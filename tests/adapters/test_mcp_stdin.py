"""``jitctx mcp``'s stdin (issue 30): every request is answered, even one the SDK's parser refuses."""

from __future__ import annotations

import json

from hostile_support import RawMcp, jitctx_argv

from jitctx.adapters.mcp import _mend


def test_issue_30_a_request_with_a_lone_surrogate_is_answered(make_repo):
    """``"\\ud800"`` is valid JSON but not valid text: the ping and the notes call that
    carry one get their answers (the surrogate read as U+FFFD, with a warning on stderr)."""
    repo = make_repo("basic")
    with RawMcp(jitctx_argv("mcp", "--root", str(repo.root)), cwd=repo.root) as server:
        server.initialize()
        rid = server.request("ping", {"_meta": {"x": "\ud800"}})
        assert server.wait_for(rid, 5.0) == {"jsonrpc": "2.0", "id": rid, "result": {}}
        nid = server.call("notes", {"action": "add", "text": "lone \udfff here"})
        added = server.wait_for(nid, 15.0)
        assert added is not None and "result" in added and not added["result"].get("isError"), added
        lid = server.call("notes", {"action": "list"})
        listed = server.wait_for(lid, 15.0)
        assert listed is not None and "lone \ufffd here" in json.dumps(listed, ensure_ascii=False)
        server.close_stdin()
        assert server.exited_within(10.0)
    assert b"lone UTF-16 surrogate" in server.stderr


def test_issue_30_mending_touches_only_lone_surrogates():
    plain = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert _mend(plain) is plain
    paired = '{"a":"\\ud83d\\ude00 \\u00e9"}\n'
    assert _mend(paired) is paired  # a valid pair and other escapes stay as sent
    assert json.loads(_mend('{"a":["x\\udc80y",{"\\ud800":1}]}')) == {"a": ["x\ufffdy", {"\ufffd": 1}]}
    assert _mend("not json \\ud800\n") == "not json \\ud800\n"  # the SDK answers a parse error itself
