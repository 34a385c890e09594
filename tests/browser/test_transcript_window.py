"""The transcript as a window over a long session (web/ui/chat.js), and the session's last messages
drawn by the page from IndexedDB before Python has loaded it (web/boot/idb.js, recentMessages)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app

COUNT = 1_200  # messages: 600 questions and answers

GENERATE = """
from py_agent.browser.main import _app
from py_agent.session import Session
from py_agent.ai.types import AssistantMessage, TextContent, UserMessage, Usage

def exchange(session, i, tag=""):
    session.append_message(UserMessage(content=[TextContent(text=f"Question number {i}{tag}")], timestamp=1_700_000_000_000 + i))
    return session.append_message(AssistantMessage(
        content=[TextContent(text=f"Answer number {i}{tag}: " + "lorem *ipsum* " * 8)],
        api="faux", provider="demo", model="demo-scripted", usage=Usage(input=10, output=20, total_tokens=30),
        timestamp=1_700_000_000_000 + i,
    ))

session = Session.create()
session.append_model_change("demo", "demo-scripted")
session.append_session_info("Windowed")
for i in range(COUNT // 2):
    last = exchange(session, i)
# A second branch from the last answer, then back to the first: the stored leaf is not the newest entry.
for i in range(COUNT // 2, COUNT // 2 + 3):
    exchange(session, i, " (other branch)")
session.branch(last.id)
await _app.store.append(session, 0, session.entries, clear_draft=False)
session.id
"""


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str) -> Iterator[App]:
    # No memory snapshot: its worker (a second Pyodide) would start beside the 1,200-message session
    # being generated in the page, which only adds to the renderer's peak, and is not tested here.
    with open_app(browser, base_url, query="?demo-tps=0&no-snapshot") as app:
        yield app


@pytest.fixture(scope="module")
def session_id(app: App) -> str:
    return str(
        app.page.evaluate(
            "async (code) => { const { pyodide } = await window.pyAgent.ready; return await pyodide.runPythonAsync(code); }",
            GENERATE.replace("COUNT", str(COUNT)),
        )
    )


def test_the_page_reads_the_last_messages_of_the_current_branch(app: App, session_id: str) -> None:
    preview = app.page.evaluate("(id) => window.pyAgentApp.db.recentMessages(id, 80)", session_id)
    texts = [item["message"]["content"][0]["text"] for item in preview["items"]]
    assert len(texts) == 80
    assert texts[0] == "Question number 560"
    assert texts[-1].startswith("Answer number 599: ")
    assert not any("other branch" in t for t in texts)
    assert preview["complete"] is False
    assert preview["meta"]["title"] == "Windowed"
    assert app.page.evaluate("() => window.pyAgentApp.db.recentMessages('no-such-session', 80)") is None


# The session's record and its last entries, read as web/boot/early-start.js reads them for the first
# screen: beside the record, its last `back` entries newest first (getAllRecords, where the browser
# has it), or after it, from where the record's count says they start; then recentMessages from
# them and as it reads by itself.
FROM_RECORDS = """async ([id, back, newestFirst]) => {
  const db = window.pyAgentApp.db;
  const tx = db.db.transaction(["sessions", "entries"], "readonly");
  const get = (req) => new Promise((resolve, reject) => { req.onsuccess = () => resolve(req.result); req.onerror = reject; });
  const store = tx.objectStore("entries");
  let record, lower, entries;
  if (newestFirst) {
    const reading = get(tx.objectStore("sessions").get(id));
    const last = get(store.getAllRecords({ query: IDBKeyRange.bound([id, -Infinity], [id, Infinity]), count: back, direction: "prev" }));
    record = await reading;
    entries = (await last).map((r) => r.value).reverse();
    lower = entries.length ? entries[0].seq : 0;
  } else {
    record = await get(tx.objectStore("sessions").get(id));
    lower = Math.max(0, record.meta.entryCount - back);
    entries = await get(store.getAll(IDBKeyRange.bound([id, lower], [id, Infinity], false, true)));
  }
  const prefetched = { id, record, lower, entries };
  return {
    read: await db.recentMessages(id, 80),
    prefetched: await db.recentMessages(id, 80, undefined, prefetched),
    other: await db.recentMessages("no-such-session", 80, undefined, { ...prefetched, id: "no-such-session", record: null }),
    lower,
  };
}"""


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("back", [200, 30])
def test_the_last_messages_read_from_records_read_ahead_are_the_same(
    app: App, session_id: str, back: int, newest_first: bool
) -> None:
    """From the records web/boot/early-start.js reads as the page starts (its last 200 entries), or from
    fewer than the 80 messages need (it reads on from there)."""
    result = app.page.evaluate(FROM_RECORDS, [session_id, back, newest_first])
    assert result["prefetched"] == result["read"]
    assert len(result["prefetched"]["items"]) == 80
    assert result["prefetched"]["items"][-1]["message"]["content"][0]["text"].startswith("Answer number 599: ")
    assert result["other"] is None
    assert result["lower"] > 0  # the session has more entries than were read ahead


def test_a_long_session_opens_at_its_end_as_a_window(app: App, session_id: str) -> None:
    page = app.page
    page.evaluate("(id) => { location.hash = `#/s/${encodeURIComponent(id)}`; }", session_id)
    page.locator("#transcript .msg.assistant", has_text="Answer number 599:").wait_for()
    # Python's transcript has replaced the page's own drawing: its messages can be edited.
    page.locator("#transcript:not([aria-busy]) .edit-msg:not([disabled])").first.wait_for()
    assert page.locator("#transcript .msg").count() <= 200
    assert page.locator("#transcript .msg", has_text="other branch").count() == 0


def scroll_until(page: Any, up: bool, text: str) -> int:
    """Scroll one viewport per animation frame until `text` is shown at that end; the most messages seen in the page."""
    return int(
        page.evaluate(
            """async ([up, text]) => {
              const scroller = document.getElementById("scroller");
              const transcript = document.getElementById("transcript");
              let most = 0;
              for (let i = 0; i < 5000; i += 1) {
                most = Math.max(most, transcript.querySelectorAll(".msg").length);
                const edge = up ? scroller.scrollTop <= 0 : scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1;
                if (edge && transcript.textContent.includes(text)) return most;
                scroller.scrollTop += (up ? -1 : 1) * scroller.clientHeight;
                await new Promise((r) => requestAnimationFrame(() => r()));
              }
              throw new Error(`never reached ${text}`);
            }""",
            [up, text],
        )
    )


def test_scrolling_reaches_the_first_message_and_back_with_a_bounded_page(app: App, session_id: str) -> None:
    page = app.page
    page.locator("#transcript .msg.assistant", has_text="Answer number 599:").wait_for()
    most = scroll_until(page, True, "Question number 0")
    assert most <= 200
    assert page.locator("#transcript .msg").first.inner_text().startswith("Question number 0")
    assert page.locator("#transcript .earlier").count() == 0
    # The end is out of the page now, and comes back when scrolled to.
    assert page.locator("#transcript .msg", has_text="Answer number 599:").count() == 0
    most = scroll_until(page, False, "Answer number 599:")
    assert most <= 200
    assert page.locator("#transcript .later").count() == 0
    assert page.locator("#transcript .msg").last.inner_text().startswith("Answer number 599:")


def test_sending_from_far_up_brings_the_window_back_to_the_end(app: App, session_id: str) -> None:
    page = app.page
    scroll_until(page, True, "Question number 0")
    page.locator("#input").fill("A new question at the end")
    page.locator("#input").press("Enter")
    page.locator("#transcript .msg.user", has_text="A new question at the end").wait_for()
    page.locator("#transcript .msg.assistant", has_text="A new question at the end").wait_for(timeout=60_000)
    assert page.locator("#transcript .msg", has_text="Question number 0").count() == 0
    assert page.locator("#transcript .msg").count() <= 200


def test_a_page_added_above_keeps_the_message_on_screen_in_place(app: App, session_id: str) -> None:
    page = app.page
    page.locator("#transcript .earlier").wait_for(state="attached")
    result = page.evaluate(
        """async () => {
          const scroller = document.getElementById("scroller");
          const transcript = document.getElementById("transcript");
          const frames = async (n) => { for (let i = 0; i < n; i += 1) await new Promise((r) => requestAnimationFrame(() => r())); };
          // Near the top of the window, not at it: the next page goes above what is on screen.
          scroller.scrollTop = 300;
          await frames(3);
          const onScreen = () => {
            const top = scroller.getBoundingClientRect().top;
            return [...transcript.querySelectorAll(".msg")].find((n) => n.getBoundingClientRect().bottom > top);
          };
          const anchor = onScreen();
          const before = anchor.getBoundingClientRect().top;
          const above = () => [...transcript.querySelectorAll(".msg")].indexOf(anchor);
          const count = above();
          const hidden = Number(/\\((\\d+) hidden\\)/.exec(transcript.querySelector(".earlier").textContent)[1]);
          transcript.querySelector(".earlier").click(); // a whole page, as the button says
          const added = above() - count;
          const right = anchor.getBoundingClientRect().top;
          await frames(5); // the new messages are drawn (and sized) by now
          return { added, hidden, moved: right - before, movedLater: anchor.getBoundingClientRect().top - before,
                   same: anchor === onScreen(), text: anchor.textContent.slice(0, 40) };
        }"""
    )
    assert result["hidden"] > 0
    assert result["added"] == min(24, result["hidden"]), result
    assert abs(result["moved"]) <= 1, result
    assert abs(result["movedLater"]) <= 1, result
    assert result["same"], result
