// The message box: Enter sends, Shift+Enter adds a line; Send becomes Stop
// while a reply streams. With a model whose template reads enable_thinking, a
// "Thinking" switch beside it turns the chat's reasoning on or off.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Rectangle {
    id: root
    property bool generating: false
    property bool ready: true
    property alias text: input.text
    property bool thinkingAvailable: false
    property bool thinking: true
    signal thinkingToggled(bool on)
    signal sendRequested(string text)
    signal stopRequested()

    function focusInput() { input.forceActiveFocus() }
    function submit() {
        if (root.generating || !root.ready || input.text.trim() === "") return
        const t = input.text
        input.text = ""
        root.sendRequested(t)
    }

    implicitHeight: Math.min(200, input.implicitHeight + 24) + 24
    color: Theme.background

    Rectangle {
        id: frame
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 16
        anchors.bottomMargin: 12
        anchors.topMargin: 4
        radius: 12
        color: Theme.input
        border.color: input.activeFocus ? Theme.accent : Theme.border

        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 12
            anchors.rightMargin: 8
            spacing: 8
            ScrollView {
                Layout.fillWidth: true
                Layout.fillHeight: true
                TextArea {
                    textFormat: TextEdit.PlainText
                    id: input
                    objectName: "composerInput"
                    placeholderText: root.ready ? qsTr("Message Cairn (Enter sends, Shift+Enter adds a line)")
                                                : qsTr("Waiting for a model…")
                    wrapMode: TextArea.Wrap
                    color: Theme.text
                    placeholderTextColor: Theme.mutedText
                    background: null
                    font.pixelSize: 15
                    verticalAlignment: TextEdit.AlignVCenter
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            event.accepted = true
                            root.submit()
                        }
                    }
                }
            }
            Switch {
                id: thinkingSwitch
                objectName: "thinkingSwitch"
                visible: root.thinkingAvailable
                checked: root.thinking
                enabled: !root.generating
                Layout.alignment: Qt.AlignVCenter
                onToggled: root.thinkingToggled(checked)
                contentItem: Label {
                    textFormat: Text.PlainText
                    text: qsTr("Thinking")
                    color: thinkingSwitch.enabled ? Theme.text : Theme.mutedText
                    leftPadding: thinkingSwitch.indicator.width + 6
                    verticalAlignment: Text.AlignVCenter
                }
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Let the model reason before it answers (this chat)")
            }
            Button {
                id: actionButton
                objectName: "sendButton"
                text: root.generating ? qsTr("Stop") : qsTr("Send")
                enabled: root.generating || (root.ready && input.text.trim() !== "")
                Layout.alignment: Qt.AlignVCenter
                onClicked: root.generating ? root.stopRequested() : root.submit()
                contentItem: Label {
                    textFormat: Text.PlainText
                    text: actionButton.text
                    color: actionButton.enabled ? Theme.accentText : Theme.mutedText
                    horizontalAlignment: Text.AlignHCenter
                    verticalAlignment: Text.AlignVCenter
                    font.bold: true
                }
                background: Rectangle {
                    implicitWidth: 72
                    implicitHeight: 36
                    radius: 8
                    color: !actionButton.enabled ? Theme.surface
                         : root.generating ? "#d9534f" : Theme.accent
                    opacity: actionButton.down ? 0.8 : 1
                }
            }
        }
    }
}
