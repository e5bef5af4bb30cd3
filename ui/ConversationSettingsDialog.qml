// The open conversation's own settings (reached from the chat header): its
// system prompt and sampling overrides, saved with the conversation. Before
// the first message they are kept for the chat about to start.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Dialog {
    id: root
    property ChatController controller
    title: root.controller.currentConversation >= 0
           ? qsTr("Settings for “%1”").arg(root.controller.currentTitle)
           : qsTr("Settings for the new chat")
    modal: true
    width: Math.min(parent ? parent.width - 80 : 600, 600)
    height: Math.min(parent ? parent.height - 60 : 600, content.implicitHeight + 140)
    anchors.centerIn: parent
    background: Rectangle { color: Theme.background; radius: Theme.radius; border.color: Theme.border }
    header: Label {
        textFormat: Text.PlainText
        text: root.title
        color: Theme.text
        font.bold: true
        font.pixelSize: 16
        elide: Text.ElideRight
        padding: 16
        bottomPadding: 4
    }
    footer: Item {
        implicitHeight: 56
        Label {
            textFormat: Text.PlainText
            anchors.left: parent.left
            anchors.leftMargin: 16
            anchors.right: closeButton.left
            anchors.verticalCenter: parent.verticalCenter
            text: qsTr("Applies to this conversation's next reply.")
            color: Theme.mutedText
            font.pixelSize: 12
            elide: Text.ElideRight
        }
        Button {
            id: closeButton
            anchors.right: parent.right
            anchors.rightMargin: 12
            anchors.verticalCenter: parent.verticalCenter
            text: qsTr("Close")
            onClicked: root.close()
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        ConversationOverrides {
            id: content
            width: parent.width
            model: root.controller.conversationSettings
            overrideCount: root.controller.conversationSettings.overrideCount
            refusal: root.controller.conversationSettings.refusal
            systemPrompt: root.controller.conversationSystemPrompt
            onSystemPromptEdited: (text) => root.controller.conversationSystemPrompt = text
            onOverrideEdited: (key, text) => root.controller.conversationSettings.setOverrideText(key, text)
            onResetAllRequested: root.controller.conversationSettings.resetAll()
        }
    }
}
