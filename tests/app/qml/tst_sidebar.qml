import QtQuick
import QtTest
import Cairn

Item {
    width: 280
    height: 500

    Sidebar {
        id: sidebar
        anchors.fill: parent
        controller: testController
    }

    TestCase {
        name: "Sidebar"
        when: windowShown

        function sectionLabels(list) {
            const out = []
            const items = list.contentItem.children
            for (let i = 0; i < items.length; ++i)
                if (items[i].section !== undefined && items[i].visible) out.push(items[i].text)
            return out
        }

        // The right-click menu opens at the pointer, also the second time.
        function test_contextMenuAtThePointer() {
            const list = findChild(sidebar, "conversationList")
            const row = list.itemAtIndex(0)
            const menu = findChild(row, "rowMenu")
            for (let i = 0; i < 2; ++i) {
                mouseClick(row, 40 + 30 * i, row.height / 2, Qt.RightButton)
                tryCompare(menu, "opened", true)
                const at = menu.contentItem.mapToItem(row, 0, 0)
                verify(Math.abs(at.x - (40 + 30 * i)) < 16, "menu at x " + at.x)
                menu.close()
                tryCompare(menu, "opened", false)
            }
        }

        // Delete from the context menu, then Undo brings the conversation back.
        function test_deleteAndUndo() {
            const list = findChild(sidebar, "conversationList")
            compare(list.count, 2)
            const row = list.itemAtIndex(0)
            const title = row.title
            mouseClick(row, 40, row.height / 2, Qt.RightButton)
            const menu = findChild(row, "rowMenu")
            tryCompare(menu, "opened", true)
            compare(menu.itemAt(2).text, "Delete")
            mouseClick(menu.itemAt(2))
            tryCompare(list, "count", 1)
            compare(testController.library.undoTitle, title)
            const undo = findChild(sidebar, "undoButton")
            tryVerify(() => undo.visible && undo.width > 0)
            // Laid out below the list, not over it.
            const bar = findChild(sidebar, "undoBar")
            tryVerify(() => bar.height > 0 && bar.y >= list.y + list.height)
            mouseClick(undo)
            tryCompare(list, "count", 2)
            compare(testController.library.undoTitle, "")
            verify(!undo.visible)
        }

        // Pin from the row's context menu (right click): the row moves into a
        // "Pinned" group at the top; Unpin from the same menu moves it back.
        function test_pinAndUnpin() {
            const list = findChild(sidebar, "conversationList")
            compare(list.count, 2)
            let row = list.itemAtIndex(1)
            compare(row.title, "alpha")
            verify(!row.pinned)

            mouseClick(row, 40, row.height / 2, Qt.RightButton)
            let menu = findChild(row, "rowMenu")
            tryCompare(menu, "opened", true)
            compare(menu.itemAt(0).text, "Pin to the top")
            mouseClick(menu.itemAt(0))
            tryVerify(() => list.itemAtIndex(0) && list.itemAtIndex(0).title === "alpha")
            verify(list.itemAtIndex(0).pinned)
            tryVerify(() => sectionLabels(list).indexOf("Pinned") >= 0)

            row = list.itemAtIndex(0)
            mouseClick(row, 40, row.height / 2, Qt.RightButton)
            menu = findChild(row, "rowMenu")
            tryCompare(menu, "opened", true)
            compare(menu.itemAt(0).text, "Unpin")
            mouseClick(menu.itemAt(0))
            tryVerify(() => list.itemAtIndex(1) && list.itemAtIndex(1).title === "alpha")
            verify(!list.itemAtIndex(1).pinned)
            tryVerify(() => sectionLabels(list).indexOf("Pinned") < 0)
        }
    }
}
