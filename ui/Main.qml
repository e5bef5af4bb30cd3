// The main window: sidebar | chat (header, banners, messages, composer) and
// the status line; the model picker and settings are dialogs.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Cairn

ApplicationWindow {
    id: window
    required property ChatController controller
    property string themeOverride: ""

    width: 1180
    height: 760
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: window.controller.currentTitle + " — Cairn"
    color: Theme.background

    palette.window: Theme.background
    palette.windowText: Theme.text
    palette.base: Theme.input
    palette.alternateBase: Theme.surface
    palette.text: Theme.text
    palette.button: Theme.surface
    palette.buttonText: Theme.text
    palette.highlight: Theme.highlight
    palette.highlightedText: Theme.accentText
    palette.placeholderText: Theme.mutedText
    palette.mid: Theme.border
    palette.midlight: Theme.hover
    palette.light: Theme.surface
    palette.dark: Theme.mutedText
    palette.shadow: Theme.border
    palette.toolTipBase: Theme.surface
    palette.toolTipText: Theme.text

    Binding {
        target: Theme
        property: "dark"
        value: (window.themeOverride !== "" ? window.themeOverride : window.controller.settings.theme) === "dark"
    }

    // Opens a dialog by name ("models", "downloads", "settings", "conversation", "import"); used by `cairn --panel`.
    function openPanel(name) {
        if (name === "models") picker.open()
        else if (name === "downloads") { picker.open(); picker.openDownloads() }
        else if (name === "settings") settingsDialog.open()
        else if (name === "conversation") conversationDialog.open()
        else if (name === "import") importDialog.open()
    }

    // Searches as if typed after Ctrl+K; used by `cairn --search`.
    function showSearch(text) { sidebar.search(text) }

    Shortcut { sequence: "Ctrl+N"; onActivated: { window.controller.newChat(); composer.focusInput() } }
    Shortcut { sequence: "Ctrl+K"; onActivated: sidebar.focusSearch() }
    Shortcut { objectName: "quitShortcut"; sequence: "Ctrl+Q"; context: Qt.ApplicationShortcut; onActivated: window.controller.quit() }
    Shortcut { sequence: "Esc"; enabled: window.controller.generating; onActivated: window.controller.stop() }

    // A message across the chat; long text wraps (its width never comes from
    // the text, so the window's layout does not follow the text's length).
    component Banner: Rectangle {
        property alias text: bannerLabel.text
        property color textColor: Theme.warningText
        property bool closable: false
        signal closed()
        width: parent ? parent.width : 0
        visible: text !== ""
        height: bannerRow.implicitHeight + 16
        RowLayout {
            id: bannerRow
            anchors.verticalCenter: parent.verticalCenter
            anchors.left: parent.left
            anchors.right: parent.right
            anchors.leftMargin: 16
            anchors.rightMargin: 8
            Label {
                textFormat: Text.PlainText
                id: bannerLabel
                Layout.fillWidth: true
                Layout.preferredWidth: 1
                wrapMode: Text.Wrap
                color: parent.parent.textColor
            }
            ToolButton {
                visible: bannerRow.parent.closable
                text: "✕"
                implicitWidth: 28
                implicitHeight: 28
                onClicked: bannerRow.parent.closed()
            }
        }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            controller: window.controller
            Layout.preferredWidth: 260
            Layout.fillHeight: true
        }
        Rectangle { Layout.preferredWidth: 1; Layout.fillHeight: true; color: Theme.border }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            // Header: conversation title, model, actions.
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: 52
                color: Theme.background
                RowLayout {
                    anchors.fill: parent
                    anchors.leftMargin: 16
                    anchors.rightMargin: 10
                    spacing: 6
                    Column {
                        Layout.fillWidth: true
                        Layout.minimumWidth: 120  // the title stays readable in a narrow window
                        spacing: 1
                        Label {
                            textFormat: Text.PlainText
                            width: parent.width
                            text: window.controller.currentTitle
                            font.pixelSize: 16
                            font.bold: true
                            color: Theme.text
                            elide: Text.ElideRight
                        }
                        // This conversation's overrides, so a changed temperature is never a surprise.
                        Label {
                            textFormat: Text.PlainText
                            objectName: "overrideSummary"
                            visible: text !== ""
                            text: window.controller.conversationSettings.summary !== ""
                                  ? qsTr("This chat: %1").arg(window.controller.conversationSettings.summary) : ""
                            width: parent.width
                            font.pixelSize: 11
                            color: Theme.mutedText
                            elide: Text.ElideRight
                        }
                    }
                    Button {
                        id: modelButton
                        objectName: "modelButton"
                        text: window.controller.modelLoading ? qsTr("Loading…")
                            : window.controller.modelReady ? window.controller.modelName : qsTr("Choose a model")
                        onClicked: picker.open()
                        flat: true
                        // Shrinks (elided) down to 90 px in a narrow window, before the title does;
                        // never wider than its text (or 300 px).
                        Layout.fillWidth: true
                        Layout.minimumWidth: 90
                        Layout.maximumWidth: Math.min(300, implicitWidth)
                        contentItem: Label {
                            textFormat: Text.PlainText
                            text: "◆  " + modelButton.text + "  ▾"
                            color: Theme.text
                            elide: Text.ElideRight
                            verticalAlignment: Text.AlignVCenter
                        }
                        background: Rectangle {
                            radius: Theme.radius
                            color: modelButton.hovered ? Theme.hover : "transparent"
                            border.color: Theme.border
                        }
                    }
                    ToolButton {
                        text: qsTr("Export")
                        enabled: window.controller.currentConversation >= 0
                        objectName: "exportButton"
                        onClicked: exportMenu.open()
                        Menu {
                            id: exportMenu
                            y: parent.height  // below the button, not over the header
                            MenuItem { text: qsTr("Export as Markdown…"); onTriggered: exportDialog.openFor("md") }
                            MenuItem { text: qsTr("Export as JSON…"); onTriggered: exportDialog.openFor("json") }
                        }
                    }
                    ToolButton {
                        text: window.controller.library.importing ? qsTr("Importing…") : qsTr("Import")
                        enabled: !window.controller.library.importing
                        onClicked: importDialog.open()
                    }
                    ToolButton {
                        objectName: "chatSettingsButton"
                        text: qsTr("Chat settings")
                        onClicked: conversationDialog.open()
                    }
                    ToolButton { text: qsTr("Settings"); onClicked: settingsDialog.open() }
                }
                Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: Theme.border }
            }

            // The banners stack in a Column: with Qt 6.4 a ColumnLayout sometimes
            // missed a banner appearing (it then covered the header or another banner).
            Column {
                Layout.fillWidth: true
                Banner {
                    objectName: "modelNote"
                    text: window.controller.modelNote
                    color: Theme.warningBackground
                    textColor: Theme.warningText
                }
                Banner {
                    objectName: "errorBanner"
                    text: window.controller.errorText !== window.controller.modelNote ? window.controller.errorText : ""
                    color: Theme.errorBackground
                    textColor: Theme.errorText
                    closable: true
                    onClosed: window.controller.clearError()
                }
                Banner {
                    objectName: "noticeBanner"
                    text: window.controller.noticeText
                    color: Theme.surface
                    textColor: Theme.text
                }
            }

            ChatView {
                controller: window.controller
                Layout.fillWidth: true
                Layout.fillHeight: true
            }

            Composer {
                id: composer
                Layout.fillWidth: true
                generating: window.controller.generating
                ready: window.controller.modelReady
                thinkingAvailable: window.controller.thinkingAvailable
                thinking: window.controller.thinking
                onThinkingToggled: (on) => window.controller.thinking = on
                onSendRequested: (text) => window.controller.send(text)
                onStopRequested: window.controller.stop()
                Component.onCompleted: focusInput()
            }

            StatusLine {
                controller: window.controller
                Layout.fillWidth: true
            }
        }
    }

    ModelPicker { id: picker; objectName: "modelPicker"; controller: window.controller }
    Connections {
        target: window.controller
        function onModelPickerRequested() { picker.open() }
        // A remote reply failed before any text: the message comes back to be sent again.
        function onDraftReturned(text) { if (composer.text === "") composer.text = text }
    }
    SettingsDialog { id: settingsDialog; controller: window.controller }
    ConversationSettingsDialog { id: conversationDialog; objectName: "conversationDialog"; controller: window.controller }

    ExportDialog { id: exportDialog; objectName: "exportDialog"; controller: window.controller }
    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a conversation")
        nameFilters: [qsTr("Cairn conversation (*.json)")]
        onAccepted: window.controller.library.importConversation(selectedFile)
    }
    FileDialogTheme { objectName: "importDialogTheme"; dialog: importDialog }
}
