// Getting a model from Hugging Face (or a mirror): search, a repository's GGUF
// files by quantization with size, fit and architecture, the download queue.
// All of it is HubDownloads (app/gui/hub_downloads.h); this is layout only.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Dialog {
    id: root
    objectName: "downloadView"
    property ChatController controller
    readonly property HubDownloads hub: hubModel
    property string hubProblem: ""
    title: qsTr("Download a model")
    modal: true
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: parent ? Math.min(parent.width - 40, 1000) : 960
    height: parent ? Math.min(parent.height - 40, 760) : 700
    padding: 12
    background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }
    header: Label {
        text: root.title
        textFormat: Text.PlainText
        color: Theme.text
        font.bold: true
        font.pixelSize: 16
        padding: 12
    }
    footer: Item {
        implicitHeight: 52
        Button {
            anchors.right: parent.right
            anchors.rightMargin: 12
            anchors.verticalCenter: parent.verticalCenter
            text: qsTr("Close")
            onClicked: root.close()
        }
    }

    HubDownloads {
        id: hubModel
        settings: root.controller.settings
        keys: root.controller.keys
        modelsDir: root.controller.dataLocation + "/models"
        onModelDownloaded: root.controller.refreshModels()
    }

    component Muted: Label {
        textFormat: Text.PlainText
        color: Theme.mutedText
        font.pixelSize: 12
        elide: Text.ElideRight
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: query
                objectName: "hubQuery"
                Layout.fillWidth: true
                color: Theme.text
                placeholderText: qsTr("Search Hugging Face for GGUF models, e.g. qwen2.5 0.5b")
                placeholderTextColor: Theme.mutedText
                onAccepted: hubModel.search(text, sort.currentIndex)
            }
            ComboBox {
                id: sort
                objectName: "hubSort"
                model: [qsTr("Most downloaded"), qsTr("Most liked"), qsTr("Recently updated")]
                implicitWidth: 190
            }
            Button {
                objectName: "hubSearch"
                text: qsTr("Search")
                onClicked: hubModel.search(query.text, sort.currentIndex)
            }
            BusyIndicator { running: hubModel.busy; visible: running; implicitWidth: 28; implicitHeight: 28 }
        }

        Label {
            objectName: "hubError"
            visible: text !== ""
            text: hubModel.error
            textFormat: Text.PlainText
            color: Theme.errorText
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 12

            // Repositories: the search results, or the recommended small models before any search.
            ColumnLayout {
                Layout.preferredWidth: 360
                Layout.maximumWidth: 360
                Layout.fillHeight: true
                Muted { text: hubModel.repos.length > 0 ? qsTr("Repositories") : qsTr("Recommended small models Cairn runs") }
                ListView {
                    id: repoList
                    objectName: "hubRepos"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    spacing: 2
                    model: hubModel.repos.length > 0 ? hubModel.repos : hubModel.recommended
                    ScrollBar.vertical: ScrollBar { }
                    delegate: ItemDelegate {
                        id: repoEntry
                        required property var modelData
                        readonly property string repo: modelData.id !== undefined ? modelData.id : modelData.repo
                        width: ListView.view.width
                        onClicked: hubModel.openRepo(repo)
                        background: Rectangle {
                            radius: Theme.radius
                            color: repoEntry.repo === hubModel.currentRepo ? Theme.selected : repoEntry.hovered ? Theme.hover : "transparent"
                        }
                        contentItem: ColumnLayout {
                            spacing: 1
                            Label { text: repoEntry.repo; textFormat: Text.PlainText; color: Theme.text; font.bold: true; elide: Text.ElideMiddle; Layout.fillWidth: true }
                            Muted {
                                Layout.fillWidth: true
                                text: repoEntry.modelData.note !== undefined ? repoEntry.modelData.note
                                      : qsTr("%1 downloads · %2 likes · updated %3%4").arg(repoEntry.modelData.downloads)
                                            .arg(repoEntry.modelData.likes).arg(repoEntry.modelData.updated || "–")
                                            .arg(repoEntry.modelData.gated ? qsTr(" · gated: needs a token") : "")
                            }
                        }
                    }
                }
            }

            // The files of the repository picked, by quantization.
            ColumnLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                Label {
                    objectName: "hubCurrentRepo"
                    text: hubModel.currentRepo !== "" ? hubModel.currentRepo : qsTr("Pick a repository to see its files")
                    textFormat: Text.PlainText
                    color: Theme.text
                    font.bold: true
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
                Muted { objectName: "hubArchitecture"; text: hubModel.architectureNote; Layout.fillWidth: true; wrapMode: Text.Wrap }
                ListView {
                    objectName: "hubFiles"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    spacing: 6
                    model: hubModel.fileGroups
                    ScrollBar.vertical: ScrollBar { }
                    delegate: ColumnLayout {
                        id: group
                        required property var modelData
                        width: ListView.view.width - 12
                        spacing: 2
                        Label { text: group.modelData.quantization; textFormat: Text.PlainText; color: Theme.accent; font.bold: true }
                        Repeater {
                            model: group.modelData.files
                            delegate: RowLayout {
                                id: fileRow
                                required property var modelData
                                objectName: "hubFile_" + modelData.name
                                Layout.fillWidth: true
                                ColumnLayout {
                                    Layout.fillWidth: true
                                    spacing: 0
                                    Label {
                                        text: fileRow.modelData.name + (fileRow.modelData.parts > 1 ? qsTr(" (%1 parts)").arg(fileRow.modelData.parts) : "")
                                        textFormat: Text.PlainText
                                        color: Theme.text
                                        elide: Text.ElideMiddle
                                        Layout.fillWidth: true
                                    }
                                    Muted {
                                        elide: Text.ElideNone
                                        wrapMode: Text.Wrap
                                        text: fileRow.modelData.note !== "" ? fileRow.modelData.note : fileRow.modelData.fitText
                                        color: fileRow.modelData.note !== "" ? Theme.errorText : Theme.mutedText
                                        Layout.fillWidth: true
                                    }
                                }
                                Label { text: fileRow.modelData.sizeText; textFormat: Text.PlainText; color: Theme.mutedText }
                                Label {
                                    objectName: "fitBadge"
                                    visible: text !== ""
                                    text: fileRow.modelData.fit
                                    textFormat: Text.PlainText
                                    font.pixelSize: 11
                                    font.bold: true
                                    color: fileRow.modelData.fit === "fits" ? Theme.accentText : fileRow.modelData.fit === "tight" ? Theme.warningText : Theme.errorText
                                    leftPadding: 6; rightPadding: 6; topPadding: 1; bottomPadding: 1
                                    background: Rectangle {
                                        radius: 4
                                        color: fileRow.modelData.fit === "fits" ? Theme.accent : fileRow.modelData.fit === "tight" ? Theme.warningBackground : Theme.errorBackground
                                    }
                                }
                                Button {
                                    objectName: "downloadButton"
                                    text: qsTr("Download")
                                    enabled: fileRow.modelData.supported
                                    onClicked: hubModel.download(fileRow.modelData.path)
                                }
                            }
                        }
                    }
                }
            }
        }

        // The queue.
        Muted { text: qsTr("Downloads (into %1)").arg(hubModel.modelsDir); visible: jobList.count > 0; Layout.fillWidth: true }
        ListView {
            id: jobList
            objectName: "hubJobs"
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(count, 2.5) * 74  // rows of ~70 px; never from contentHeight (0 before any row exists)
            visible: count > 0
            clip: true
            spacing: 4
            model: hubModel.jobs
            ScrollBar.vertical: ScrollBar { }
            delegate: Rectangle {
                id: job
                required property var model  // the row's roles (DownloadJobListModel)
                objectName: "job_" + model.state
                width: ListView.view.width
                implicitHeight: jobColumn.implicitHeight + 12
                radius: Theme.radius
                color: Theme.surface
                ColumnLayout {
                    id: jobColumn
                    anchors.fill: parent
                    anchors.margins: 6
                    spacing: 2
                    RowLayout {
                        Layout.fillWidth: true
                        Label { text: job.model.name; textFormat: Text.PlainText; color: Theme.text; elide: Text.ElideMiddle; Layout.fillWidth: true }
                        Muted { objectName: "jobBytes"; text: job.model.bytesText }
                        Muted { objectName: "jobStatus"; text: job.model.status }
                        Button { objectName: "jobPause"; text: qsTr("Pause"); visible: job.model.canPause; onClicked: hubModel.pause(job.model.id) }
                        Button { objectName: "jobResume"; text: qsTr("Resume"); visible: job.model.canResume; onClicked: hubModel.resume(job.model.id) }
                        Button { objectName: "jobCancel"; text: qsTr("Cancel"); visible: job.model.canCancel; onClicked: hubModel.cancel(job.model.id) }
                        Button {
                            objectName: "jobUse"
                            text: qsTr("Use")
                            visible: job.model.state === "done"
                            onClicked: { root.controller.selectModel(job.model.path); root.close() }
                        }
                        ToolButton { text: qsTr("Remove"); visible: job.model.canForget; onClicked: hubModel.forget(job.model.id) }
                    }
                    ProgressBar { value: job.model.progress; Layout.fillWidth: true }
                    Label {
                        objectName: "jobError"
                        visible: text !== ""
                        text: job.model.error
                        textFormat: Text.PlainText
                        color: Theme.errorText
                        wrapMode: Text.Wrap
                        font.pixelSize: 12
                        Layout.fillWidth: true
                    }
                }
            }
        }

        // Where models come from: the hub (mirrors speak the same API) and the token for gated repositories.
        RowLayout {
            Layout.fillWidth: true
            Muted { text: qsTr("Hub") }
            TextField {
                id: hubUrl
                objectName: "hubUrl"
                text: root.controller.settings.hubUrl
                color: Theme.text
                Layout.preferredWidth: 260
                onAccepted: root.hubProblem = hubModel.setHubUrl(text)
            }
            Button { text: qsTr("Set"); onClicked: root.hubProblem = hubModel.setHubUrl(hubUrl.text) }
            TextField {
                id: token
                objectName: "hubToken"
                Layout.fillWidth: true
                echoMode: TextInput.Password
                color: Theme.text
                placeholderTextColor: Theme.mutedText
                placeholderText: hubModel.hasToken ? qsTr("An access token is stored in the keyring")
                                                   : qsTr("Access token for gated models (optional; kept in the keyring)")
                onAccepted: { hubModel.setToken(text); text = "" }
            }
            Button { text: qsTr("Save token"); enabled: token.text !== ""; onClicked: { hubModel.setToken(token.text); token.text = "" } }
        }
        Label {
            visible: text !== ""
            text: root.hubProblem !== "" ? root.hubProblem : root.controller.keys.warning
            textFormat: Text.PlainText
            color: Theme.warningText
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
}
