import QtQuick
import QtTest
import Cairn

Item {
    width: 700
    height: 500

    ListModel {
        id: rows
        ListElement { key: "temperature"; label: "Temperature"; hint: "0 = greedy"; overridden: true; valueText: "0.2"; defaultText: "0.8" }
        ListElement { key: "seed"; label: "Seed"; hint: "0 = random"; overridden: false; valueText: ""; defaultText: "0" }
    }
    ConversationOverrides {
        id: pane
        width: 700
        model: rows
        overrideCount: 1
        systemPrompt: "Be brief."
    }
    SignalSpy { id: editSpy; target: pane; signalName: "overrideEdited" }
    SignalSpy { id: promptSpy; target: pane; signalName: "systemPromptEdited" }
    SignalSpy { id: resetAllSpy; target: pane; signalName: "resetAllRequested" }

    TestCase {
        name: "ConversationOverrides"
        when: windowShown

        function init() {
            editSpy.clear()
            promptSpy.clear()
            resetAllSpy.clear()
        }

        function test_showsOverrideOrDefault() {
            const temp = findChild(pane, "override_temperature")
            const seed = findChild(pane, "override_seed")
            verify(temp && seed)
            compare(findChild(temp, "field").text, "0.2")
            compare(findChild(seed, "field").text, "")
            compare(findChild(seed, "field").placeholderText, "default 0")
            verify(findChild(temp, "reset").enabled)
            verify(!findChild(seed, "reset").enabled)
            // Rows keep one height whether or not they hold an override.
            compare(temp.height, seed.height)
        }

        function test_typingSetsAnOverride() {
            const field = findChild(findChild(pane, "override_seed"), "field")
            field.forceActiveFocus()
            keyClick(Qt.Key_4)
            keyClick(Qt.Key_2)
            keyClick(Qt.Key_Return)
            compare(editSpy.count, 1)
            compare(editSpy.signalArguments[0][0], "seed")
            compare(editSpy.signalArguments[0][1], "42")
            // Nothing stored the value (no C++ model here): the field shows what is stored again.
            compare(field.text, "")
        }

        function test_resetAndResetAll() {
            mouseClick(findChild(findChild(pane, "override_temperature"), "reset"))
            compare(editSpy.count, 1)
            compare(editSpy.signalArguments[0][0], "temperature")
            compare(editSpy.signalArguments[0][1], "")
            mouseClick(findChild(pane, "resetAllButton"))
            compare(resetAllSpy.count, 1)
            pane.overrideCount = 0
            verify(!findChild(pane, "resetAllButton").enabled)
            pane.overrideCount = 1
        }

        function test_refusalShown() {
            const label = findChild(pane, "refusal")
            compare(label.height, 0)
            pane.refusal = "Top-p is a number from 0 to 1."
            tryVerify(() => label.height > 0)  // laid out at the next polish
            compare(label.text, "Top-p is a number from 0 to 1.")
            pane.refusal = ""
            tryCompare(label, "height", 0)
        }

        function test_systemPrompt() {
            const area = findChild(pane, "conversationPrompt")
            compare(area.text, "Be brief.")
            area.forceActiveFocus()
            area.text = "Be kind."
            area.editingFinished()
            compare(promptSpy.count, 1)
            compare(promptSpy.signalArguments[0][0], "Be kind.")
        }
    }
}
