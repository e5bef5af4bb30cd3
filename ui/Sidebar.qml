// Conversations grouped by date (pinned ones first, in "Pinned"), New chat,
// search over message text, pin, rename and delete (with undo); the row's
// actions are in its ⋯ menu, also opened by a right click.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Rectangle {
    id: root
    property ChatController controller
    color: Theme.sidebar

    function focusSearch() { searchField.forceActiveFocus(); searchField.selectAll() }
    function search(text) { searchField.text = text; searchField.forceActiveFocus() }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 10
        spacing: 8

        Button {
            id: newChat
            Layout.fillWidth: true
            text: qsTr("New chat")
            onClicked: root.controller.newChat()
            contentItem: RowLayout {
                Label { textFormat: Text.PlainText; text: "+  " + newChat.text; color: Theme.text; font.bold: true; Layout.fillWidth: true }
                Label { textFormat: Text.PlainText; text: "Ctrl+N"; color: Theme.mutedText; font.pixelSize: 11 }
            }
            background: Rectangle {
                implicitHeight: 38
                radius: Theme.radius
                color: newChat.hovered ? Theme.hover : Theme.background
                border.color: Theme.border
            }
        }

        TextField {
            id: searchField
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search messages (Ctrl+K)")
            color: Theme.text
            placeholderTextColor: Theme.mutedText
            onTextChanged: { root.controller.library.search(text); results.currentIndex = results.count > 0 ? 0 : -1 }
            Keys.onEscapePressed: text = ""
            // The results from the keyboard: Up / Down choose, Enter opens.
            Keys.onDownPressed: results.currentIndex = Math.min(results.currentIndex + 1, results.count - 1)
            Keys.onUpPressed: results.currentIndex = Math.max(results.currentIndex - 1, 0)
            onAccepted: if (results.currentItem) results.currentItem.clicked()
            background: Rectangle {
                implicitHeight: 34
                radius: Theme.radius
                color: Theme.input
                border.color: searchField.activeFocus ? Theme.accent : Theme.border
            }
        }

        ListView {
            id: results
            objectName: "searchResults"
            visible: searchField.text !== ""
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.controller.library.searchResults
            spacing: 2
            delegate: ItemDelegate {
                id: hit
                required property var modelData
                width: ListView.view.width
                onClicked: root.controller.openSearchResult(modelData.conversationId, modelData.messageId)
                background: Rectangle {
                    radius: Theme.radius
                    color: hit.ListView.isCurrentItem ? Theme.selected : hit.hovered ? Theme.hover : "transparent"
                }
                contentItem: ColumnLayout {
                    spacing: 2
                    Label { textFormat: Text.PlainText; text: modelData.title; color: Theme.text; font.bold: true; elide: Text.ElideRight; Layout.fillWidth: true }
                    // The snippet is escaped text; its only markup is the hit's <b><u> (chat_controller.cpp).
                    Label {
                        objectName: "searchSnippet"
                        text: modelData.snippet
                        textFormat: Text.StyledText
                        color: Theme.mutedText
                        wrapMode: Text.Wrap
                        maximumLineCount: 3
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        font.pixelSize: 12
                    }
                }
            }
            Label {
                textFormat: Text.PlainText
                anchors.centerIn: parent
                visible: results.count === 0
                text: qsTr("No messages match")
                color: Theme.mutedText
            }
        }

        ListView {
            id: conversations
            objectName: "conversationList"
            visible: searchField.text === ""
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.controller.conversations
            spacing: 1
            ScrollBar.vertical: ScrollBar { }
            // The open conversation stays in sight (opened from search or `--conversation`).
            Connections {
                target: root.controller
                function onCurrentConversationChanged() {
                    const row = root.controller.conversations.rowOf(root.controller.currentConversation)
                    if (row >= 0) Qt.callLater(() => conversations.positionViewAtIndex(row, ListView.Contain))
                }
            }
            section.property: "section"
            section.delegate: Label {
                textFormat: Text.PlainText
                required property string section
                text: section
                color: Theme.mutedText
                font.pixelSize: 11
                font.bold: true
                topPadding: 12
                bottomPadding: 4
                leftPadding: 8
            }
            delegate: ItemDelegate {
                id: row
                required property var conversationId
                required property string title
                required property bool pinned
                property bool renaming: false
                readonly property bool current: conversationId === root.controller.currentConversation
                width: ListView.view.width
                height: 36
                topPadding: 0
                bottomPadding: 0
                leftPadding: 12
                rightPadding: 4
                onClicked: root.controller.openConversation(conversationId)
                onDoubleClicked: { renaming = true; renameField.text = title; renameField.forceActiveFocus(); renameField.selectAll() }
                // At the pointer (a bare popup() lands elsewhere once the menu has been shown).
                TapHandler { acceptedButtons: Qt.RightButton; onTapped: (point) => menu.popup(row, point.position.x, point.position.y) }
                background: Rectangle {
                    radius: Theme.radius
                    color: row.current ? Theme.selected : row.hovered ? Theme.hover : "transparent"
                }
                contentItem: RowLayout {
                    spacing: 4
                    Label {
                        textFormat: Text.PlainText
                        visible: !row.renaming
                        text: row.title
                        color: Theme.text
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    TextField {
                        id: renameField
                        visible: row.renaming
                        Layout.fillWidth: true
                        color: Theme.text
                        onAccepted: { root.controller.library.renameConversation(row.conversationId, text); row.renaming = false }
                        onActiveFocusChanged: if (!activeFocus) row.renaming = false
                        Keys.onEscapePressed: row.renaming = false
                    }
                    ToolButton {
                        visible: (row.hovered || row.current) && !row.renaming
                        text: "⋯"
                        implicitWidth: 28
                        implicitHeight: 28
                        onClicked: menu.popup()
                        contentItem: Label { textFormat: Text.PlainText; text: "⋯"; color: Theme.mutedText; horizontalAlignment: Text.AlignHCenter; verticalAlignment: Text.AlignVCenter }
                        background: null
                        Menu {
                            id: menu
                            objectName: "rowMenu"
                            MenuItem {
                                objectName: "pinItem"
                                text: row.pinned ? qsTr("Unpin") : qsTr("Pin to the top")
                                onTriggered: root.controller.library.setPinned(row.conversationId, !row.pinned)
                            }
                            MenuItem {
                                text: qsTr("Rename")
                                onTriggered: { row.renaming = true; renameField.text = row.title; renameField.forceActiveFocus(); renameField.selectAll() }
                            }
                            MenuItem { text: qsTr("Delete"); onTriggered: root.controller.library.deleteConversation(row.conversationId) }
                        }
                    }
                }
            }
            Label {
                textFormat: Text.PlainText
                anchors.centerIn: parent
                width: parent.width - 20
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                visible: conversations.count === 0
                text: qsTr("Your conversations will appear here")
                color: Theme.mutedText
            }
        }

        Rectangle {
            objectName: "undoBar"
            visible: root.controller.library.undoTitle !== ""
            // Goes after a while (the deleted chat stays in the database for a day).
            Timer {
                id: undoTimer
                interval: 12000
                running: parent.visible
                onTriggered: root.controller.library.dismissUndo()
            }
            Connections {
                target: root.controller.library
                function onUndoChanged() { if (root.controller.library.undoTitle !== "") undoTimer.restart() }
            }
            Layout.fillWidth: true
            implicitHeight: undoRow.implicitHeight + 12
            radius: Theme.radius
            color: Theme.surface
            RowLayout {
                id: undoRow
                anchors.fill: parent
                anchors.margins: 6
                Label {
                    textFormat: Text.PlainText
                    text: qsTr("Deleted “%1”").arg(root.controller.library.undoTitle)
                    color: Theme.text
                    wrapMode: Text.Wrap
                    maximumLineCount: 2
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                    Layout.preferredWidth: 1  // the row's width, not the title's
                    leftPadding: 4
                }
                Button { objectName: "undoButton"; text: qsTr("Undo"); flat: true; onClicked: root.controller.library.undoDelete() }
            }
        }
    }
}
