// The open conversation's settings: its system prompt and, for each sampling
// setting, either the app default (empty field, default shown as placeholder)
// or an override. Used in the conversation settings dialog and in Settings.
// Parsing, ranges and storage are the ConversationSettingsModel's.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

ColumnLayout {
    id: root
    // Rows with roles key, label, hint, overridden, valueText, defaultText.
    property var model
    property string systemPrompt: ""
    property int overrideCount: 0
    property int labelWidth: 170
    // Why the last value typed was refused (empty: nothing to say).
    property string refusal: ""
    signal systemPromptEdited(string text)
    // text empty: back to the default.
    signal overrideEdited(string key, string text)
    signal resetAllRequested()
    spacing: 6

    Label {
        textFormat: Text.PlainText
        text: qsTr("System prompt")
        color: Theme.mutedText
    }
    TextArea {
        textFormat: TextEdit.PlainText
        id: promptArea
        objectName: "conversationPrompt"
        Layout.fillWidth: true
        Layout.minimumHeight: 64
        wrapMode: TextArea.Wrap
        color: Theme.text
        placeholderText: qsTr("(uses the default system prompt)")
        placeholderTextColor: Theme.mutedText
        text: root.systemPrompt
        onEditingFinished: if (text !== root.systemPrompt) root.systemPromptEdited(text)
        background: Rectangle {
            radius: Theme.radius
            color: Theme.input
            border.color: promptArea.activeFocus ? Theme.accent : Theme.border
        }
    }

    RowLayout {
        Layout.fillWidth: true
        Layout.topMargin: 8
        Label {
            textFormat: Text.PlainText
            text: qsTr("Sampling (empty = app default)")
            color: Theme.mutedText
            Layout.fillWidth: true
        }
        ToolButton {
            id: resetAll
            objectName: "resetAllButton"
            text: qsTr("Use all defaults")
            enabled: root.overrideCount > 0
            implicitHeight: 30
            onClicked: root.resetAllRequested()
            contentItem: Label {
                textFormat: Text.PlainText
                text: resetAll.text
                color: resetAll.enabled ? Theme.accent : Theme.mutedText
                font.pixelSize: 13
                horizontalAlignment: Text.AlignHCenter
                verticalAlignment: Text.AlignVCenter
            }
            background: Rectangle { radius: 6; color: resetAll.hovered ? Theme.hover : "transparent" }
        }
    }

    Label {
        textFormat: Text.PlainText
        objectName: "refusal"
        Layout.preferredHeight: root.refusal !== "" ? implicitHeight : 0
        clip: true
        text: root.refusal
        color: Theme.errorText
        font.pixelSize: 12
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Repeater {
        model: root.model
        delegate: RowLayout {
            id: row
            required property string key
            required property string label
            required property string hint
            required property bool overridden
            required property string valueText
            required property string defaultText
            objectName: "override_" + key
            Layout.fillWidth: true
            spacing: 8

            Label {
                textFormat: Text.PlainText
                text: row.label
                color: Theme.text
                font.bold: row.overridden
                Layout.preferredWidth: root.labelWidth
                elide: Text.ElideRight
            }
            TextField {
                id: field
                objectName: "field"
                Layout.preferredWidth: 130
                color: Theme.text
                text: row.valueText
                placeholderText: qsTr("default %1").arg(row.defaultText)
                placeholderTextColor: Theme.mutedText
                inputMethodHints: Qt.ImhFormattedNumbersOnly
                // Back to what is stored when the value was refused.
                onEditingFinished: {
                    if (text !== row.valueText) root.overrideEdited(row.key, text)
                    text = Qt.binding(() => row.valueText)
                }
                background: Rectangle {
                    implicitHeight: 32
                    radius: Theme.radius
                    color: Theme.input
                    border.color: field.activeFocus ? Theme.accent : row.overridden ? Theme.accent : Theme.border
                    border.width: row.overridden && !field.activeFocus ? 1.5 : 1
                }
            }
            Label {
                textFormat: Text.PlainText
                text: row.hint
                color: Theme.mutedText
                font.pixelSize: 12
                Layout.fillWidth: true
                elide: Text.ElideRight
            }
            // Always takes its place (hidden by opacity) so the rows keep one height and width.
            ToolButton {
                id: resetButton
                objectName: "reset"
                text: qsTr("Reset")
                enabled: row.overridden
                opacity: row.overridden ? 1 : 0
                implicitHeight: 30
                onClicked: root.overrideEdited(row.key, "")
                contentItem: Label {
                    textFormat: Text.PlainText
                    text: resetButton.text
                    color: Theme.accent
                    font.pixelSize: 13
                    horizontalAlignment: Text.AlignHCenter
                    verticalAlignment: Text.AlignVCenter
                }
                background: Rectangle { radius: 6; color: resetButton.hovered ? Theme.hover : "transparent" }
            }
        }
    }
}
