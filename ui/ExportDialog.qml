// Export the open conversation: a file name proposed from its title in the
// documents folder, editable, a folder picker beside it, and Save. (Qt 6.4's
// own save dialog offers no file name field, so it is not used here.) The
// controller writes the file and says where in the notice line.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Cairn

Dialog {
    id: root
    property ChatController controller
    property string format: "md"
    readonly property bool exists: root.controller.library.fileExists(pathField.text)

    function openFor(fmt) {
        root.format = fmt
        pathField.text = root.controller.library.proposedExportPath(root.controller.currentConversation, fmt)
        reasoningBox.checked = false
        reasoningBox.visible = root.controller.library.hasReasoning(root.controller.currentConversation)
        root.open()
        pathField.forceActiveFocus()
    }
    function save() {
        if (pathField.text.trim() === "") return
        if (root.controller.library.exportToPath(root.controller.currentConversation, pathField.text, root.format, reasoningBox.checked)) root.close()
    }

    title: root.format === "json" ? qsTr("Export as JSON") : qsTr("Export as Markdown")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 560, 560)
    anchors.centerIn: parent
    background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }
    header: Label {
        textFormat: Text.PlainText
        text: root.title
        color: Theme.text
        font.bold: true
        font.pixelSize: 16
        padding: 16
        bottomPadding: 4
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            textFormat: Text.PlainText
            text: qsTr("Save to")
            color: Theme.mutedText
        }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: pathField
                objectName: "exportPath"
                Layout.fillWidth: true
                color: Theme.text
                selectByMouse: true
                background: Rectangle { radius: 6; color: Theme.input; border.color: pathField.activeFocus ? Theme.accent : Theme.border }
                onAccepted: root.save()
            }
            Button { text: qsTr("Folder…"); onClicked: folderDialog.open() }
        }
        Label {
            textFormat: Text.PlainText
            objectName: "exportExists"
            visible: root.exists
            text: qsTr("A file with this name exists: Save replaces it.")
            color: Theme.warningText
            font.pixelSize: 12
        }
        CheckBox {
            id: reasoningBox
            objectName: "exportReasoning"
            text: qsTr("Include the model's reasoning")
        }
    }

    footer: RowLayout {
        spacing: 8
        Item { Layout.fillWidth: true }
        Button { text: qsTr("Cancel"); onClicked: root.close() }
        Button {
            objectName: "exportSave"
            text: qsTr("Save")
            highlighted: true
            enabled: pathField.text.trim() !== ""
            onClicked: root.save()
            Layout.rightMargin: 12
            Layout.bottomMargin: 12
        }
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("Choose a folder")
        // The file keeps its name; only the folder changes.
        onAccepted: pathField.text = root.controller.library.pathInFolder(selectedFolder, pathField.text)
    }
    FileDialogTheme { dialog: folderDialog }
}
