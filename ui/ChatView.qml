// The open conversation: the messages of the active branch, following the
// stream while the view is at the bottom.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Item {
    id: root
    property ChatController controller

    // Links in replies in the theme's colour (the model renders them).
    Binding {
        target: root.controller ? root.controller.messages : null
        property: "linkColor"
        value: Theme.accent
    }

    ListView {
        id: list
        objectName: "messageList"
        anchors.fill: parent
        model: root.controller ? root.controller.messages : null
        clip: true
        spacing: 18
        topMargin: 20
        bottomMargin: 20
        boundsBehavior: Flickable.StopAtBounds
        ScrollBar.vertical: ScrollBar { id: scrollBar }
        // Follows new text only while the reader is at the bottom: a scroll by
        // the reader (wheel, drag, scroll bar) decides as it happens — away
        // from the bottom stops following, back to it resumes — and nothing
        // repositions the view while they scroll. Sending, regenerating and
        // opening a chat follow again. (Only the reader's scrolling counts:
        // the ListView moves contentY itself as delegates get their heights.)
        property bool following: true
        readonly property bool readerScrolling: moving || scrollBar.pressed
        // Within about a line of the end (positionViewAtEnd() leaves the bottom
        // margin out, and text may arrive while the reader scrolls down to it).
        function atBottom() { return contentY + height >= originY + contentHeight - 24 }
        function followEnd() { if (following && !readerScrolling) positionViewAtEnd() }
        function follow() { following = true; Qt.callLater(followEnd) }
        onContentYChanged: if (readerScrolling) following = atBottom()
        onMovementEnded: following = atBottom()
        // Switching a branch keeps the clicked message where it is on screen:
        // the rows from it on are replaced (the ListView lays them out again and
        // may move its origin), so its offset in the view is put back once they are.
        function switchBranch(messageId, delta, row) {
            following = false
            const before = itemAtIndex(row)
            if (!before) return root.controller.switchBranch(messageId, delta)
            const offset = before.y - contentY  // (the delegate itself goes with the switch)
            const keep = () => { forceLayout(); const item = itemAtIndex(row); if (item) contentY = item.y - offset }
            root.controller.switchBranch(messageId, delta)
            keep()
            Qt.callLater(keep)
        }
        onContentHeightChanged: if (following) Qt.callLater(followEnd)
        onHeightChanged: if (following) Qt.callLater(followEnd)

        Connections {
            target: root.controller
            function onCurrentConversationChanged() { list.follow() }
            function onGeneratingChanged() { if (root.controller.generating) list.follow() }
            function onMessageFocusRequested(messageId) {
                const row = root.controller.messages.rowOf(messageId)
                if (row < 0) return
                list.following = false
                Qt.callLater(() => list.positionViewAtIndex(row, ListView.Center))
            }
        }

        delegate: MessageDelegate {
            width: ListView.view.width
            isLast: index === ListView.view.count - 1
            busy: root.controller.generating
            onCopyRequested: (text) => root.controller.copyText(text)
            onEditRequested: (id, text) => root.controller.editMessage(id, text)
            onRegenerateRequested: (id) => root.controller.regenerate(id)
            canContinue: !root.controller.modelRemote
            onContinueRequested: (id) => root.controller.continueReply(id)
            onBranchRequested: (id, delta) => list.switchBranch(id, delta, index)
            onLinkRequested: (link) => root.controller.openLink(link)
        }
    }

    ColumnLayout {
        anchors.centerIn: parent
        visible: list.count === 0
        spacing: 8
        width: Math.min(parent.width - 48, 520)
        Label {
            textFormat: Text.PlainText
            Layout.alignment: Qt.AlignHCenter
            text: qsTr("What shall we talk about?")
            font.pixelSize: 24
            color: Theme.text
        }
        Label {
            textFormat: Text.PlainText
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            color: Theme.mutedText
            text: !root.controller ? ""
                : root.controller.modelLoading ? qsTr("Loading the model…")
                : root.controller.modelReady ? qsTr("Chatting with %1. Everything runs on this computer.").arg(root.controller.modelName)
                : qsTr("Pick a model to start.")
        }
    }
}
