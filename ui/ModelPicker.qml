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

        Label {
            objectName: "keyringWarning"
            visible: text !== ""
            text: root.controller.keys.warning
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
                required property bool remote
                required property string endpoint
                readonly property bool current: path === root.controller.modelPath
                readonly property bool interrupted: path === root.controller.interruptedModel
                width: ListView.view.width
                // A broken file is clickable too: the error line then says why and what to do.
                // A remote endpoint that failed has only its Remove button.
                onClicked: { if (remote && error !== "") return; root.controller.selectModel(path); root.close() }
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
                            objectName: "remoteBadge"
                            textFormat: Text.PlainText
                            visible: entry.remote
                            text: qsTr("remote")
                            color: Theme.accentText
                            font.pixelSize: 11
                            font.bold: true
                            leftPadding: 6; rightPadding: 6; topPadding: 1; bottomPadding: 1
                            background: Rectangle { radius: 4; color: Theme.accent }
                        }
                        ToolButton {
                            visible: entry.remote && (entry.error !== "" || entry.hovered)
                            text: qsTr("Remove endpoint")
                            font.pixelSize: 11
                            onClicked: root.controller.removeRemoteEndpoint(entry.endpoint)
                        }
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
                text: qsTr("No GGUF files yet. Download one, add a folder or open a file.")
                color: Theme.mutedText
            }
        }

        RowLayout {
            Button { text: qsTr("Add folder…"); onClicked: folderDialog.open() }
            Button { text: qsTr("Open file…"); onClicked: fileDialog.open() }
            Button { objectName: "addRemoteButton"; text: qsTr("Add remote endpoint…"); onClicked: remoteDialog.open() }
            Button { objectName: "openDownloadsButton"; text: qsTr("Download…"); onClicked: downloadView.open() }
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

    // An OpenAI-compatible server (vLLM, llama-server, Ollama, LM Studio,
    // cairn-cli serve): its base URL goes to the settings, the key to the keyring.
    Dialog {
        id: remoteDialog
        objectName: "remoteDialog"
        title: qsTr("Add remote endpoint")
        modal: true
        anchors.centerIn: parent
        width: Math.min(root.width - 40, 520)
        property string problem: ""
        onOpened: { problem = ""; urlField.forceActiveFocus() }
        background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }
        function submit() {
            problem = root.controller.addRemoteEndpoint(urlField.text, keyField.text)
            if (problem === "") { urlField.text = ""; keyField.text = ""; close() }
        }
        ColumnLayout {
            anchors.fill: parent
            spacing: 6
            Label { textFormat: Text.PlainText; text: qsTr("Base URL"); color: Theme.mutedText }
            TextField {
                id: urlField
                objectName: "remoteUrl"
                Layout.fillWidth: true
                color: Theme.text
                placeholderText: qsTr("e.g. http://127.0.0.1:8080/v1")
                placeholderTextColor: Theme.mutedText
                onAccepted: remoteDialog.submit()
            }
            Label { textFormat: Text.PlainText; text: qsTr("API key (optional; kept in the keyring)"); color: Theme.mutedText }
            TextField {
                id: keyField
                objectName: "remoteKey"
                Layout.fillWidth: true
                color: Theme.text
                echoMode: TextInput.Password
                onAccepted: remoteDialog.submit()
            }
            Label {
                textFormat: Text.PlainText
                text: qsTr("Any OpenAI-compatible server: vLLM, llama-server, Ollama (port 11434), LM Studio, cairn-cli serve.")
                color: Theme.mutedText
                font.pixelSize: 11
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                objectName: "remoteProblem"
                visible: text !== ""
                textFormat: Text.PlainText
                text: remoteDialog.problem
                color: Theme.errorText
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            RowLayout {
                Item { Layout.fillWidth: true }
                Button { text: qsTr("Cancel"); onClicked: remoteDialog.close() }
                Button { objectName: "remoteAdd"; text: qsTr("Add"); enabled: urlField.text.trim() !== ""; onClicked: remoteDialog.submit() }
            }
        }
    }

    // Models from Hugging Face or a mirror (ui/DownloadView.qml).
    DownloadView { id: downloadView; controller: root.controller }
    function openDownloads() { downloadView.open() }

    FolderDialog {
        id: folderDialog
        title: qsTr("Add a folder of models")
        onAccepted: root.controller.addModelFolder(selectedFolder)
    }
    FileDialogTheme { dialog: folderDialog }
    FileDialog {
        id: fileDialog
        title: qsTr("Open a model file")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: { root.controller.openModelFile(selectedFile); root.close() }
    }
    FileDialogTheme { dialog: fileDialog }
}
