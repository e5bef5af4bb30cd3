import QtQuick
import QtTest
import Cairn

Item {
    width: 600
    height: 200

    Composer {
        id: composer
        width: 600
        ready: true
    }
    SignalSpy { id: sendSpy; target: composer; signalName: "sendRequested" }
    SignalSpy { id: stopSpy; target: composer; signalName: "stopRequested" }
    SignalSpy { id: thinkingSpy; target: composer; signalName: "thinkingToggled" }

    TestCase {
        name: "Composer"
        when: windowShown

        function init() {
            sendSpy.clear()
            stopSpy.clear()
            composer.generating = false
            composer.text = ""
        }

        // The Thinking switch shows only for a template that reads enable_thinking.
        function test_thinkingSwitch() {
            const sw = findChild(composer, "thinkingSwitch")
            verify(sw)
            verify(!sw.visible)
            composer.thinkingAvailable = true
            verify(sw.visible)
            verify(sw.checked)
            mouseClick(sw)
            compare(thinkingSpy.count, 1)
            compare(thinkingSpy.signalArguments[0][0], false)
            composer.generating = true
            verify(!sw.enabled)
            composer.thinkingAvailable = false
        }

        function test_enterSends() {
            const input = findChild(composer, "composerInput")
            input.forceActiveFocus()
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 1)
            compare(sendSpy.signalArguments[0][0], "hi")
            compare(composer.text, "")
        }

        function test_shiftEnterAddsLine() {
            const input = findChild(composer, "composerInput")
            input.forceActiveFocus()
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_B)
            compare(sendSpy.count, 0)
            compare(composer.text, "a\nb")
        }

        function test_emptyOrBusyDoesNotSend() {
            const input = findChild(composer, "composerInput")
            input.forceActiveFocus()
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 0)
            composer.text = "wait"
            composer.generating = true
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 0)
            const button = findChild(composer, "sendButton")
            compare(button.text, "Stop")
            mouseClick(button)
            compare(stopSpy.count, 1)
        }
    }
}
