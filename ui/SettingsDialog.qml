// Settings: engine, sampling, chat, this conversation, storage and
// appearance. App settings go to QSettings; the open conversation's system
// prompt and sampling overrides to the database.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Dialog {
    id: root
    property ChatController controller
    readonly property var s: controller.settings
    title: qsTr("Settings")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 640, 640)
    height: Math.min(parent ? parent.height - 60 : 640, 680)
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
    background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }
    // Its own title and palette, bound to the theme: with Qt 6.4 an open popup
    // does not pick up the window's palette when the theme changes.
    header: Label {
        objectName: "settingsTitle"
        textFormat: Text.PlainText
        text: root.title
        color: Theme.text
        font.bold: true
        font.pixelSize: 16
        padding: 16
        bottomPadding: 4
    }
    palette.window: Theme.background
    palette.windowText: Theme.text
    palette.base: Theme.input
    palette.text: Theme.text
    palette.button: Theme.surface
    palette.buttonText: Theme.text
    palette.highlight: Theme.highlight
    palette.highlightedText: Theme.accentText
    palette.mid: Theme.border
    palette.midlight: Theme.hover
    palette.light: Theme.surface
    palette.dark: Theme.mutedText

    component Heading: Label {
        textFormat: Text.PlainText
        Layout.columnSpan: 2
        Layout.topMargin: 10
        font.bold: true
        color: Theme.text
    }
    component Name: Label { textFormat: Text.PlainText; color: Theme.mutedText; Layout.preferredWidth: 200 }
    // A generation setting, its range from the C++ table (generation_limits.h):
    // a whole number in a spin box, any other number in a text field.
    component SettingSpinBox: SpinBox {
        required property string key
        readonly property var limit: root.s.generationLimits[key]
        objectName: "setting_" + key
        from: limit.min
        to: limit.max
        value: root.s[key]
        onValueModified: root.s[key] = value
        editable: true
    }
    component NumberField: TextField {
        required property string key
        readonly property var limit: root.s.generationLimits[key]
        objectName: "setting_" + key
        Layout.preferredWidth: 140
        color: Theme.text
        text: root.s[key]
        // A number outside the range is not accepted, so it never reaches the settings.
        validator: DoubleValidator { locale: "C"; bottom: limit.min; top: limit.max }
        inputMethodHints: Qt.ImhFormattedNumbersOnly
        onEditingFinished: root.s[key] = Number(text)
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        GridLayout {
            width: parent.width
            columns: 2
            columnSpacing: 12
            rowSpacing: 6

            Heading { text: qsTr("Engine") }
            Name { text: qsTr("Threads (0 = all cores)") }
            SettingSpinBox { key: "threads" }
            Name { visible: threadsInEffect.visible }  // the grid's first column, so the note sits under the field
            Label {
                id: threadsInEffect
                objectName: "threadsInEffect"
                textFormat: Text.PlainText
                visible: root.s.threads > root.s.cpuCount
                text: qsTr("In effect: %1, the CPUs of this machine").arg(root.s.cpuCount)
                color: Theme.mutedText
                font.pixelSize: 12
            }
            Name { text: qsTr("Context size (tokens)") }
            SettingSpinBox { key: "contextSize"; stepSize: 256 }
            Name { visible: contextInEffect.visible }  // the grid's first column, so the note sits under the field
            Label {
                id: contextInEffect
                objectName: "contextInEffect"
                textFormat: Text.PlainText
                visible: root.controller.modelReady && root.controller.contextSize > 0
                         && root.controller.contextSize < root.s.contextSize
                text: qsTr("In effect: %1 tokens, the most %2 allows").arg(root.controller.contextSize).arg(root.controller.modelName)
                color: Theme.mutedText
                font.pixelSize: 12
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Name { text: qsTr("Prefill chunk (tokens)") }
            SettingSpinBox { key: "prefillChunk" }

            Heading { text: qsTr("Sampling (defaults for every conversation)") }
            Name { text: qsTr("Temperature (0 = greedy)") }
            NumberField { key: "temperature" }
            Name { text: qsTr("Top-k (0 = off)") }
            SettingSpinBox { key: "topK" }
            Name { text: qsTr("Top-p (1 = off)") }
            NumberField { key: "topP" }
            Name { text: qsTr("Min-p (0 = off)") }
            NumberField { key: "minP" }
            Name { text: qsTr("Repetition penalty (1 = off)") }
            NumberField { key: "repeatPenalty" }
            Name { text: qsTr("Seed (0 = random)") }
            SettingSpinBox { key: "seed" }
            Name { text: qsTr("Maximum reply tokens") }
            SettingSpinBox { key: "maxTokens" }

            Heading { text: qsTr("Chat") }
            Name { text: qsTr("Default system prompt"); Layout.alignment: Qt.AlignTop; Layout.topMargin: 6 }
            TextArea {
                textFormat: TextEdit.PlainText
                id: defaultPrompt
                Layout.fillWidth: true
                Layout.minimumHeight: 64
                wrapMode: TextArea.Wrap
                color: Theme.text
                text: root.s.systemPrompt
                placeholderText: qsTr("(none)")
                placeholderTextColor: Theme.mutedText
                onEditingFinished: root.s.systemPrompt = text
                background: Rectangle {
                    radius: Theme.radius
                    color: Theme.input
                    border.color: defaultPrompt.activeFocus ? Theme.accent : Theme.border
                }
            }
            Name { text: qsTr("When the context is full") }
            ComboBox {
                Layout.fillWidth: true
                model: [qsTr("Stop with a message"), qsTr("Drop the oldest turns (keep the system prompt)")]
                currentIndex: root.s.dropOldestTurns ? 1 : 0
                onActivated: (i) => root.s.dropOldestTurns = (i === 1)
            }

            Heading {
                text: root.controller.currentConversation >= 0
                      ? qsTr("This conversation: “%1”").arg(root.controller.currentTitle)
                      : qsTr("This conversation (the new chat)")
                Layout.fillWidth: true
                elide: Text.ElideRight
            }
            ConversationOverrides {
                objectName: "settingsOverrides"
                labelWidth: 204  // lines the fields up with the grid's second column
                Layout.columnSpan: 2
                Layout.fillWidth: true
                model: root.controller.conversationSettings
                overrideCount: root.controller.conversationSettings.overrideCount
                refusal: root.controller.conversationSettings.refusal
                systemPrompt: root.controller.conversationSystemPrompt
                onSystemPromptEdited: (text) => root.controller.conversationSystemPrompt = text
                onOverrideEdited: (key, text) => root.controller.conversationSettings.setOverrideText(key, text)
                onResetAllRequested: root.controller.conversationSettings.resetAll()
            }

            // Serves the loaded model to other apps (ApiServerControl); the
            // key goes to the keyring, never to the settings file.
            Heading { text: qsTr("Local API server (OpenAI-compatible)") }
            Name { text: qsTr("Serve the loaded model") }
            CheckBox {
                objectName: "apiServerEnabled"
                checked: root.s.apiServerEnabled
                onToggled: { root.s.apiServerEnabled = checked; root.controller.apiServer.apply() }
            }
            Name { text: qsTr("Host") }
            TextField {
                objectName: "apiServerHost"
                Layout.preferredWidth: 220
                color: Theme.text
                text: root.s.apiServerHost
                onEditingFinished: if (text !== root.s.apiServerHost) { root.s.apiServerHost = text; root.controller.apiServer.apply() }
            }
            Name { text: qsTr("Port") }
            SpinBox {
                objectName: "apiServerPort"
                from: 1; to: 65535; editable: true
                textFromValue: (v) => String(v)  // no thousands separator in a port
                value: root.s.apiServerPort
                onValueModified: { root.s.apiServerPort = value; root.controller.apiServer.apply() }
            }
            Name { text: qsTr("API key (optional on 127.0.0.1)") }
            RowLayout {
                TextField {
                    objectName: "apiServerKey"
                    Layout.preferredWidth: 220
                    color: Theme.text
                    echoMode: TextInput.Password
                    placeholderText: root.controller.apiServer.hasKey ? qsTr("(kept in the keyring)") : qsTr("(none)")
                    placeholderTextColor: Theme.mutedText
                    onEditingFinished: if (text !== "") { root.controller.apiServer.setKey(text); text = "" }
                }
                ToolButton {
                    visible: root.controller.apiServer.hasKey
                    text: qsTr("Remove key")
                    onClicked: root.controller.apiServer.setKey("")
                }
            }
            TextEdit {  // selectable, so the URL can be copied
                objectName: "apiServerStatus"
                Layout.columnSpan: 2
                Layout.fillWidth: true
                readOnly: true
                selectByMouse: true
                textFormat: TextEdit.PlainText
                wrapMode: TextEdit.Wrap
                text: root.controller.apiServer.status
                color: root.controller.apiServer.failed ? Theme.errorText : Theme.mutedText
                selectionColor: Theme.accent
                font.pixelSize: 13
            }
            Label {
                Layout.columnSpan: 2
                Layout.fillWidth: true
                visible: text !== ""
                textFormat: Text.PlainText
                wrapMode: Text.Wrap
                text: root.controller.keys.warning
                color: Theme.warningText
            }

            Heading { text: qsTr("Storage and appearance") }
            Name { text: qsTr("Snapshot budget (MiB)") }
            SettingSpinBox { key: "snapshotBudgetMiB"; stepSize: 256 }
            Name { text: qsTr("Theme") }
            ComboBox {
                Layout.fillWidth: true
                model: ["light", "dark"]
                currentIndex: root.s.theme === "dark" ? 1 : 0
                onActivated: (i) => root.s.theme = (i === 1 ? "dark" : "light")
            }
            Name { text: qsTr("Model folders"); Layout.alignment: Qt.AlignTop }
            ColumnLayout {
                Layout.fillWidth: true
                Label { textFormat: Text.PlainText; text: root.controller.dataLocation + "/models"; color: Theme.mutedText; elide: Text.ElideMiddle; Layout.fillWidth: true }
                Repeater {
                    model: root.s.modelFolders
                    delegate: RowLayout {
                        required property string modelData
                        Layout.fillWidth: true
                        Label { textFormat: Text.PlainText; text: modelData; color: Theme.text; elide: Text.ElideMiddle; Layout.fillWidth: true }
                        ToolButton {
                            text: qsTr("Remove")
                            onClicked: {
                                root.s.modelFolders = root.s.modelFolders.filter(f => f !== modelData)
                                root.controller.refreshModels()
                            }
                        }
                    }
                }
            }
        }
    }
}
