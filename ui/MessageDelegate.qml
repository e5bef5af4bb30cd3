// One message of the chat: Markdown prose, code blocks with Copy, and the
// actions (copy, edit for user messages, regenerate for replies, `< 1/2 >`
// between sibling branches). A reply left unfinished (stopped before any
// text, cut off by a crash) says so and offers Retry, and Continue when it has
// text. A reasoning model's reasoning is a block above the answer, open while
// it streams and closed once the answer begins (the reader's click decides after).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Cairn

Item {
    id: root
    required property int index
    required property var messageId
    required property string role
    required property string content
    required property var segments
    required property int siblingIndex
    required property int siblingCount
    required property string stats
    required property bool streaming
    required property bool complete
    required property string reasoning
    required property bool thinking
    required property string reasoningLabel
    property bool isLast: false
    // Continue is offered (a local model: it resumes after the stored text).
    property bool canContinue: false
    property bool busy: false

    signal copyRequested(string text)
    signal editRequested(var messageId, string text)
    signal regenerateRequested(var messageId)
    signal continueRequested(var messageId)
    signal branchRequested(var messageId, int delta)
    signal linkRequested(string link)

    readonly property bool isUser: role === "user"
    // Unfinished and not being written now (the last reply is, while busy).
    readonly property bool interrupted: !isUser && !complete && !streaming && !(isLast && busy)
    property bool editing: false
    function saveEdit() {
        if (editArea.text.trim() === "") return
        root.editing = false
        root.editRequested(root.messageId, editArea.text)
    }

    component ActionButton: ToolButton {
        id: actionButton
        font.pixelSize: 12
        implicitHeight: 26
        padding: 4
        background: Rectangle { radius: 6; color: actionButton.hovered ? Theme.hover : "transparent" }
        contentItem: Label {
            textFormat: Text.PlainText
            text: actionButton.text
            font: actionButton.font
            color: actionButton.enabled ? Theme.mutedText : Theme.border
            horizontalAlignment: Text.AlignHCenter
            verticalAlignment: Text.AlignVCenter
        }
    }

    implicitHeight: column.implicitHeight + 8

    ColumnLayout {
        id: column
        width: Math.min(root.width - 48, Theme.contentWidth)
        anchors.horizontalCenter: parent.horizontalCenter
        spacing: 4

        Label {
            textFormat: Text.PlainText
            text: root.isUser ? qsTr("You") : qsTr("Assistant")
            font.bold: true
            font.pixelSize: 13
            color: Theme.mutedText
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
        }

        Rectangle {
            id: bubble
            visible: !root.editing
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.preferredWidth: root.isUser ? Math.min(column.width * 0.85, bodyColumn.implicitWidth + 28) : column.width
            Layout.preferredHeight: bodyColumn.implicitHeight + (root.isUser ? 20 : 0)
            radius: 12
            color: root.isUser ? Theme.surface : "transparent"

            ColumnLayout {
                id: bodyColumn
                anchors.left: parent.left
                anchors.right: parent.right
                anchors.top: parent.top
                anchors.margins: root.isUser ? 10 : 0
                anchors.leftMargin: root.isUser ? 14 : 0
                anchors.rightMargin: root.isUser ? 14 : 0
                spacing: 8

                ColumnLayout {
                    id: reasoningBlock
                    objectName: "reasoningBlock"
                    visible: !root.isUser && root.reasoningLabel !== ""
                    property bool chosen: false  // the reader opened or closed it
                    property bool chosenOpen: false
                    readonly property bool open: chosen ? chosenOpen : root.thinking
                    Layout.fillWidth: true
                    spacing: 4
                    ActionButton {
                        objectName: "reasoningToggle"
                        text: (reasoningBlock.open ? "▾ " : "▸ ") + root.reasoningLabel
                        onClicked: { reasoningBlock.chosenOpen = !reasoningBlock.open; reasoningBlock.chosen = true }
                    }
                    Rectangle {
                        visible: reasoningBlock.open && root.reasoning !== ""
                        Layout.fillWidth: true
                        Layout.preferredHeight: reasoningText.implicitHeight
                        color: "transparent"
                        Rectangle { width: 2; height: parent.height; color: Theme.border }
                        Label {
                            id: reasoningText
                            objectName: "reasoningText"
                            x: 12
                            width: parent.width - 12
                            textFormat: Text.PlainText
                            text: root.reasoning
                            wrapMode: Text.Wrap
                            color: Theme.mutedText
                            font.pixelSize: 13
                        }
                    }
                }

                Repeater {
                    model: root.segments
                    delegate: Loader {
                        required property var modelData
                        Layout.fillWidth: true
                        sourceComponent: modelData.kind === "code" ? codeComponent : textComponent
                        Component {
                            id: textComponent
                            // Rich text made by safeMarkdownHtml (raw HTML escaped, no
                            // images); a link shows its real target before it is opened.
                            TextEdit {
                                id: prose
                                objectName: "messageText"
                                property alias linkTip: linkTip
                                text: modelData.html
                                textFormat: TextEdit.RichText
                                readOnly: true
                                selectByMouse: true
                                wrapMode: TextEdit.Wrap
                                color: Theme.text
                                selectionColor: Theme.accent
                                font.pixelSize: 15
                                onLinkActivated: (link) => root.linkRequested(link)
                                HoverHandler { cursorShape: prose.hoveredLink !== "" ? Qt.PointingHandCursor : Qt.IBeamCursor }
                                ToolTip {
                                    id: linkTip
                                    objectName: "linkTip"
                                    visible: prose.hoveredLink !== ""
                                    delay: 200
                                    text: prose.hoveredLink
                                    contentItem: Label {
                                        text: linkTip.text
                                        textFormat: Text.PlainText
                                        wrapMode: Text.WrapAnywhere
                                        color: Theme.text
                                        font.pixelSize: 12
                                    }
                                    background: Rectangle { radius: 6; color: Theme.surface; border.color: Theme.border }
                                }
                            }
                        }
                        Component {
                            id: codeComponent
                            CodeBlock {
                                code: modelData.text
                                language: modelData.language
                                onCopyRequested: (text) => root.copyRequested(text)
                            }
                        }
                    }
                }
                Label {
                    textFormat: Text.PlainText
                    objectName: "interruptedNote"
                    visible: root.interrupted
                    text: root.content === "" && root.reasoning === "" ? qsTr("Stopped before the reply began.")
                                              : qsTr("This reply was cut off before it ended.")
                    color: Theme.mutedText
                    font.italic: true
                }
                Label {
                    textFormat: Text.PlainText
                    visible: root.streaming && root.content === "" && root.reasoningLabel === ""
                    text: qsTr("Thinking…")
                    color: Theme.mutedText
                    font.italic: true
                }
            }
        }

        // Editing a user message makes a new branch.
        ColumnLayout {
            visible: root.editing
            Layout.fillWidth: true
            // As the composer: Enter saves, Shift+Enter adds a line, Esc cancels.
            TextArea {
                id: editArea
                objectName: "editArea"
                textFormat: TextEdit.PlainText
                Layout.fillWidth: true
                wrapMode: TextArea.Wrap
                color: Theme.text
                background: Rectangle { radius: 8; color: Theme.input; border.color: Theme.accent }
                Keys.onPressed: (event) => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                            && !(event.modifiers & Qt.ShiftModifier)) {
                        event.accepted = true
                        root.saveEdit()
                    } else if (event.key === Qt.Key_Escape) {
                        event.accepted = true
                        root.editing = false
                    }
                }
            }
            RowLayout {
                Layout.alignment: Qt.AlignRight
                Button { text: qsTr("Cancel"); flat: true; onClicked: root.editing = false }
                Button {
                    text: qsTr("Save and send")
                    highlighted: true
                    onClicked: root.saveEdit()
                }
            }
        }

        RowLayout {
            id: actions
            spacing: 2
            visible: !root.editing && !root.streaming
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft

            ActionButton {
                objectName: "previousBranch"
                visible: root.siblingCount > 1
                text: "‹"
                font.pixelSize: 17
                implicitWidth: 24
                enabled: root.siblingIndex > 0 && !root.busy
                onClicked: root.branchRequested(root.messageId, -1)
            }
            Label {
                textFormat: Text.PlainText
                visible: root.siblingCount > 1
                text: (root.siblingIndex + 1) + " / " + root.siblingCount
                color: Theme.mutedText
                font.pixelSize: 12
            }
            ActionButton {
                objectName: "nextBranch"
                visible: root.siblingCount > 1
                text: "›"
                font.pixelSize: 17
                implicitWidth: 24
                enabled: root.siblingIndex + 1 < root.siblingCount && !root.busy
                onClicked: root.branchRequested(root.messageId, 1)
            }
            ActionButton { text: qsTr("Copy"); onClicked: root.copyRequested(root.content) }
            ActionButton {
                visible: root.isUser
                enabled: !root.busy
                text: qsTr("Edit")
                onClicked: { editArea.text = root.content; root.editing = true; editArea.forceActiveFocus() }
            }
            ActionButton {
                objectName: "regenerateButton"
                visible: !root.isUser && (root.isLast || root.interrupted)
                enabled: !root.busy
                text: root.interrupted ? qsTr("Retry") : qsTr("Regenerate")
                onClicked: root.regenerateRequested(root.messageId)
            }
            ActionButton {
                objectName: "continueButton"
                visible: root.interrupted && root.canContinue && (root.content !== "" || root.reasoning !== "")
                enabled: !root.busy
                text: qsTr("Continue")
                onClicked: root.continueRequested(root.messageId)
            }
            Label {
                textFormat: Text.PlainText
                visible: root.stats !== ""
                text: root.stats
                color: Theme.mutedText
                font.pixelSize: 11
                leftPadding: 6
            }
        }
    }
}
