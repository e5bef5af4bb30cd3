import QtQuick
import QtTest
import Cairn

Item {
    width: 800
    height: 600

    MessageDelegate {
        id: reply
        width: 800
        index: 1
        messageId: 42
        role: "assistant"
        content: "Some **text**\n\n```js\nlet x = 1\n```"
        segments: [{ kind: "text", text: "Some **text**", language: "", html: "Some <b>text</b>" },
                   { kind: "code", text: "let x = 1", language: "js" }]
        siblingIndex: 0
        siblingCount: 2
        stats: "5 tokens"
        streaming: false
        complete: true
        reasoning: ""
        thinking: false
        reasoningLabel: ""
        isLast: true
    }
    MessageDelegate {
        id: question
        y: 300
        width: 800
        index: 0
        messageId: 41
        role: "user"
        content: "hello"
        segments: [{ kind: "text", text: "hello", language: "", html: "hello" }]
        siblingIndex: 0
        siblingCount: 1
        stats: ""
        streaming: false
        complete: true
        reasoning: ""
        thinking: false
        reasoningLabel: ""
    }
    MessageDelegate {
        id: linked
        y: 420
        width: 800
        index: 2
        messageId: 43
        role: "assistant"
        content: "[click here](https://example.org/real)"
        segments: [{ kind: "text", text: content, language: "",
                     html: "<p>see <a href=\"https://example.org/real\">click here</a> now</p>" }]
        siblingIndex: 0
        siblingCount: 1
        stats: ""
        streaming: false
        complete: true
        reasoning: ""
        thinking: false
        reasoningLabel: ""
    }
    // A reply cut off (complete = 0 in the store) that is not being written.
    MessageDelegate {
        id: cut
        y: 480
        width: 800
        index: 3
        messageId: 44
        role: "assistant"
        content: "half a sent"
        segments: [{ kind: "text", text: content, language: "", html: "half a sent" }]
        siblingIndex: 0
        siblingCount: 1
        stats: ""
        streaming: false
        complete: false
        reasoning: ""
        thinking: false
        reasoningLabel: ""
        canContinue: true
    }
    // A reasoning model's reply: the reasoning block above the answer.
    MessageDelegate {
        id: reasoned
        y: 560
        width: 800
        index: 4
        messageId: 45
        role: "assistant"
        content: "It is 5."
        segments: [{ kind: "text", text: content, language: "", html: "It is 5." }]
        siblingIndex: 0
        siblingCount: 1
        stats: ""
        streaming: true
        complete: false
        reasoning: "First 2, then 3."
        thinking: true
        reasoningLabel: "Thinking…"
        isLast: true
        busy: true
    }
    SignalSpy { id: continueSpy; target: cut; signalName: "continueRequested" }
    SignalSpy { id: cutRetrySpy; target: cut; signalName: "regenerateRequested" }
    SignalSpy { id: linkSpy; target: linked; signalName: "linkRequested" }
    SignalSpy { id: branchSpy; target: reply; signalName: "branchRequested" }
    SignalSpy { id: copySpy; target: reply; signalName: "copyRequested" }
    SignalSpy { id: regenSpy; target: reply; signalName: "regenerateRequested" }
    SignalSpy { id: editSpy; target: question; signalName: "editRequested" }

    function findByText(item, text) {
        if (item.text === text && item.visible) return item
        for (let i = 0; i < item.children.length; ++i) {
            const found = findByText(item.children[i], text)
            if (found) return found
        }
        return null
    }

    TestCase {
        name: "MessageDelegate"
        when: windowShown

        function test_codeBlockCopies() {
            const copy = findChild(reply, "copyButton")
            verify(copy)
            mouseClick(copy)
            compare(copySpy.count, 1)
            compare(copySpy.signalArguments[0][0], "let x = 1")
        }

        function test_branchSwitcher() {
            verify(findByText(reply, "1 / 2"))
            const next = findByText(reply, "›")
            const previous = findByText(reply, "‹")
            verify(next && previous)
            verify(next.enabled)
            verify(!previous.enabled)
            mouseClick(next)
            compare(branchSpy.count, 1)
            compare(branchSpy.signalArguments[0][0], 42)
            compare(branchSpy.signalArguments[0][1], 1)
            verify(!findByText(question, "1 / 1"))
        }

        function test_regenerateOnLastReplyOnly() {
            const regen = findByText(reply, "Regenerate")
            verify(regen)
            mouseClick(regen)
            compare(regenSpy.count, 1)
            verify(!findByText(question, "Regenerate"))
        }

        // Hovering a link shows where it really goes; a click asks to open it.
        function test_linkShowsItsTargetBeforeOpening() {
            const prose = findChild(linked, "messageText")
            verify(prose)
            compare(prose.textFormat, TextEdit.RichText)
            const at = prose.positionToRectangle(prose.getText(0, prose.length).indexOf("click") + 2)
            const x = at.x + 1, y = at.y + at.height / 2
            compare(prose.linkAt(x, y), "https://example.org/real")
            mouseMove(prose, x, y)
            tryCompare(prose, "hoveredLink", "https://example.org/real")
            const tip = prose.linkTip
            verify(tip)
            tryCompare(tip, "visible", true)
            compare(tip.text, "https://example.org/real")
            mouseClick(prose, x, y)
            compare(linkSpy.count, 1)
            compare(linkSpy.signalArguments[0][0], "https://example.org/real")
        }

        // Not the last message, still offered: Retry, with a note saying why.
        function test_interruptedReplyIsMarkedWithRetry() {
            const note = findChild(cut, "interruptedNote")
            verify(note && note.visible)
            compare(note.text, "This reply was cut off before it ended.")
            verify(!findChild(reply, "interruptedNote").visible)
            const retry = findChild(cut, "regenerateButton")
            verify(retry && retry.visible)
            compare(retry.text, "Retry")
            mouseClick(retry)
            compare(cutRetrySpy.count, 1)
            compare(cutRetrySpy.signalArguments[0][0], 44)
            // While it is being written (the last reply, busy) it is not marked.
            cut.isLast = true
            cut.busy = true
            verify(!note.visible)
            cut.busy = false
            cut.isLast = false
        }

        // Continue beside Retry for a cut-off reply with text; not for a remote model.
        function test_interruptedReplyOffersContinue() {
            const cont = findChild(cut, "continueButton")
            verify(cont && cont.visible)
            mouseClick(cont)
            compare(continueSpy.count, 1)
            compare(continueSpy.signalArguments[0][0], 44)
            cut.canContinue = false
            verify(!cont.visible)
            cut.canContinue = true
            verify(!findChild(reply, "continueButton").visible)
        }

        // Open while the reasoning streams; closed once the answer begins; a click decides after that.
        function test_reasoningBlockOpensWhileThinking() {
            const toggle = findChild(reasoned, "reasoningToggle")
            const text = findChild(reasoned, "reasoningText")
            verify(toggle && text)
            verify(toggle.visible)
            compare(toggle.text, "▾ Thinking…")
            verify(text.visible)
            compare(text.text, "First 2, then 3.")
            reasoned.thinking = false
            reasoned.reasoningLabel = "Thought for 3 s"
            compare(toggle.text, "▸ Thought for 3 s")
            verify(!text.visible)
            mouseClick(toggle)
            verify(text.visible)
            mouseClick(toggle)
            verify(!text.visible)
            verify(!findChild(reply, "reasoningToggle").visible)
        }

        // Enter saves like the composer's Enter sends; Shift+Enter adds a line.
        function test_editEnterSavesShiftEnterAddsALine() {
            editSpy.clear()
            mouseClick(findByText(question, "Edit"))
            const area = findChild(question, "editArea")
            verify(area && area.activeFocus)
            keyClick(Qt.Key_End)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_Y)
            verify(question.editing)
            compare(area.text, "hello\ny")
            keyClick(Qt.Key_Return)
            compare(editSpy.count, 1)
            compare(editSpy.signalArguments[0][1], "hello\ny")
            verify(!question.editing)
        }

        function test_editMakesARequest() {
            editSpy.clear()
            const edit = findByText(question, "Edit")
            verify(edit)
            mouseClick(edit)
            verify(question.editing)
            keyClick(Qt.Key_End)
            keyClick(Qt.Key_X)
            mouseClick(findByText(question, "Save and send"))
            compare(editSpy.count, 1)
            compare(editSpy.signalArguments[0][0], 41)
            compare(editSpy.signalArguments[0][1], "hellox")
            verify(!question.editing)
        }
    }
}
