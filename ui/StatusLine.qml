// The bottom line: progress while loading or prefilling, speed of the last
// reply, context use, and how the conversation was resumed.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Rectangle {
    id: root
    property ChatController controller
    implicitHeight: 28
    color: Theme.sidebar

    Rectangle { anchors.top: parent.top; width: parent.width; height: 1; color: Theme.border }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 12
        spacing: 14

        ProgressBar {
            objectName: "progressBar"
            visible: root.controller.modelLoading || root.controller.progress >= 0
            indeterminate: root.controller.modelLoading || root.controller.progress < 0
            value: Math.max(0, root.controller.progress)
            Layout.preferredWidth: 140
        }
        Label {
            textFormat: Text.PlainText
            visible: text !== ""
            text: root.controller.progressText
            color: Theme.mutedText
            font.pixelSize: 12
        }
        Label {
            textFormat: Text.PlainText
            text: root.controller.generating ? qsTr("Generating… (Esc stops)") : ""
            visible: text !== ""
            color: Theme.mutedText
            font.pixelSize: 12
        }
        Item { Layout.fillWidth: true }
        Label {
            textFormat: Text.PlainText
            visible: text !== ""
            text: root.controller.resumeNote
            color: Theme.mutedText
            font.pixelSize: 12
        }
        Label {
            textFormat: Text.PlainText
            visible: text !== ""
            text: root.controller.speedText
            color: Theme.mutedText
            font.pixelSize: 12
        }
        Label {
            textFormat: Text.PlainText
            visible: root.controller.contextSize > 0
            text: qsTr("context %1 / %2").arg(root.controller.contextUsed).arg(root.controller.contextSize)
            // Warns when nine tenths are used: the next turns may not fit.
            color: root.controller.contextUsed * 10 >= root.controller.contextSize * 9 ? Theme.warningText : Theme.mutedText
            font.pixelSize: 12
        }
    }
}
