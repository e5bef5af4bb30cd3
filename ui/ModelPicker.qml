// Choose a model: every GGUF file found, with what it is and what it costs;
// files that cannot be used say why.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Cairn

Dialog {
    id: root
    property ChatController controller
    title: qsTr("Models")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 720, 720)
    height: Math.min(parent ? parent.height - 80 : 640, 640)
    anchors.centerIn: parent
    footer: Item {
        implicitHeight: 56
        Button {
            anchors.right: parent.right
            anchors.rightMargin: 12
            anchors.verticalCenter: parent.verticalCenter
            text: qsTr("Close")
            onClicked: root.close()
        }
    }
    onOpened: root.controller.refreshModels()

    background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        // After a start that died while loading a model (ChatController::start).
        Label {
            objectName: "interruptedNote"
            visible: text !== ""
            text: root.controller.interruptedModel !== ""
                  ? qsTr("Cairn stopped while loading %1 last time, so it was not loaded again. You can try it again or choose another model.")
                        .arg(root.controller.interruptedModel)
                  : ""
            textFormat: Text.PlainText
            wrapMode: Text.Wrap
            color: Theme.warningText
            Layout.fillWidth: true
        }

        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 4
            model: root.controller.models
            ScrollBar.vertical: ScrollBar { }
            delegate: ItemDelegate {
                id: entry
                required property string path
                required property string name
                required property string fileName
                required property string summary
                required property string error
                required property bool bundled
                required property bool placeholder
                required property bool demo
                readonly property bool current: path === root.controller.modelPath
                readonly property bool interrupted: path === root.controller.interruptedModel
                width: ListView.view.width
                // A broken file is clickable too: the error line then says why and what to do.
                onClicked: { root.controller.selectModel(path); root.close() }
                background: Rectangle {
                    radius: Theme.radius
                    color: entry.current ? Theme.selected : entry.hovered ? Theme.hover : "transparent"
                    border.color: entry.current ? Theme.accent : "transparent"
                }
                contentItem: ColumnLayout {
                    spacing: 2
                    RowLayout {
                        Label { textFormat: Text.PlainText; text: entry.name; font.bold: true; color: Theme.text; elide: Text.ElideRight; Layout.fillWidth: true }
                        Label { textFormat: Text.PlainText; visible: entry.bundled; text: qsTr("bundled"); color: Theme.mutedText; font.pixelSize: 11 }
                        Label {
                            textFormat: Text.PlainText
                            visible: entry.interrupted
                            text: qsTr("stopped Cairn while loading last time")
                            color: Theme.errorText
                            font.pixelSize: 11
                        }
                        Label {
                            textFormat: Text.PlainText
                            visible: entry.placeholder || entry.demo
                            text: entry.placeholder ? qsTr("random weights: produces random text")
                                                    : qsTr("demo: knows only a few small tasks")
                            color: Theme.warningText
                            font.pixelSize: 11
                        }
                    }
                    Label { textFormat: Text.PlainText; text: entry.fileName; color: Theme.mutedText; font.pixelSize: 12; elide: Text.ElideMiddle; Layout.fillWidth: true }
                    Label {
                        textFormat: Text.PlainText
                        text: entry.summary
                        color: entry.error === "" ? Theme.mutedText : Theme.errorText
                        font.pixelSize: 12
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }
            Label {
                textFormat: Text.PlainText
                anchors.centerIn: parent
                visible: list.count === 0
                text: qsTr("No GGUF files yet. Add a folder or open a file.")
                color: Theme.mutedText
            }
        }

        RowLayout {
            Button { text: qsTr("Add folder…"); onClicked: folderDialog.open() }
            Button { text: qsTr("Open file…"); onClicked: fileDialog.open() }
            Item { Layout.fillWidth: true }
            Label {
                textFormat: Text.PlainText
                text: qsTr("Models folder: %1/models").arg(root.controller.dataLocation)
                color: Theme.mutedText
                font.pixelSize: 11
                elide: Text.ElideMiddle
                Layout.maximumWidth: 360
            }
        }
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("Add a folder of models")
        onAccepted: root.controller.addModelFolder(selectedFolder)
    }
    FileDialog {
        id: fileDialog
        title: qsTr("Open a model file")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: { root.controller.openModelFile(selectedFile); root.close() }
    }
}
