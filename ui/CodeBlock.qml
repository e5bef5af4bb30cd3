// A fenced code block: language label, monospace body, and a Copy button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Rectangle {
    id: root
    property string code: ""
    property string language: ""
    signal copyRequested(string text)

    implicitHeight: column.implicitHeight
    // Wide enough for the longest line (up to what the layout allows).
    implicitWidth: Math.max(body.implicitWidth + 24, 240)
    radius: Theme.radius
    color: Theme.codeBackground
    border.color: Theme.border

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 4
            Label {
                textFormat: Text.PlainText
                objectName: "codeLanguage"
                text: root.language !== "" ? root.language : qsTr("code")
                elide: Text.ElideRight
                color: Theme.mutedText
                font.pixelSize: 12
                Layout.fillWidth: true
            }
            ToolButton {
                id: copyButton
                objectName: "copyButton"
                property bool copied: false
                text: copied ? qsTr("Copied") : qsTr("Copy")
                font.pixelSize: 12
                background: Rectangle { radius: 6; color: copyButton.hovered ? Theme.hover : "transparent" }
                onClicked: {
                    root.copyRequested(root.code)
                    copied = true
                    resetTimer.restart()
                }
                Timer { id: resetTimer; interval: 1500; onTriggered: copyButton.copied = false }
            }
        }
        Rectangle { Layout.fillWidth: true; height: 1; color: Theme.border }
        TextEdit {
            id: body
            objectName: "codeBody"
            Layout.fillWidth: true
            Layout.margins: 12
            text: root.code
            textFormat: TextEdit.PlainText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.WrapAnywhere
            font.family: Theme.monoFamily
            font.pixelSize: 13
            color: Theme.text
            selectionColor: Theme.accent
        }
    }
}
