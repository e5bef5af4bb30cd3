// Gives a Qt Quick FileDialog or FolderDialog the theme's colours. Qt 6.4's
// own dialogs (Basic style) draw the path bar on a plain white rectangle
// (light crumbs on white in the dark theme) and a selected row as white text
// on a pale tint (unreadable in the light theme); and an open popup does not
// follow a theme switch. The dialog's popup is internal, so once it is shown
// it is found by its title label in the window's overlay and re-coloured.
import QtQuick
import Cairn

QtObject {
    id: root
    required property QtObject dialog  // FileDialog or FolderDialog, with a title
    // The restyled path bar, once the dialog was shown (tests read it).
    property Item pathBar: null

    readonly property Connections shown: Connections {
        target: root.dialog
        function onVisibleChanged() { if (root.dialog.visible) Qt.callLater(root.restyle) }
    }

    function titleLabelIn(item) {
        if (item.objectName === "dialogTitleBarLabel" && item.text === root.dialog.title) return item
        for (let i = 0; i < item.children.length; ++i) {
            const found = titleLabelIn(item.children[i])
            if (found) return found
        }
        return null
    }

    function restyle() {
        const window = root.dialog.parentWindow
        if (!window || !window.contentItem) return
        // The overlay is a child of the window's root item (an ApplicationWindow's
        // contentItem is below that root) and the popup one of the overlay's.
        let top = window.contentItem
        while (top.parent) top = top.parent
        const layers = top.children
        for (let i = 0; i < layers.length; ++i) {
            for (let j = 0; j < layers[i].children.length; ++j) {
                const popup = layers[i].children[j]
                const label = titleLabelIn(popup)
                if (label) return apply(popup, label)
            }
        }
    }

    function apply(popup, label) {
        const p = popup.palette
        p.window = Qt.binding(() => Theme.background)
        p.windowText = Qt.binding(() => Theme.text)
        p.base = Qt.binding(() => Theme.input)
        p.text = Qt.binding(() => Theme.text)
        p.button = Qt.binding(() => Theme.surface)
        p.buttonText = Qt.binding(() => Theme.text)
        p.light = Qt.binding(() => Theme.surface)
        p.midlight = Qt.binding(() => Theme.hover)
        p.mid = Qt.binding(() => Theme.border)
        p.dark = Qt.binding(() => Theme.mutedText)
        p.placeholderText = Qt.binding(() => Theme.mutedText)
        p.highlight = Qt.binding(() => Theme.highlight)
        // A selected row is the window colour tinted with the highlight: text, not white, reads on it.
        p.highlightedText = Qt.binding(() => Theme.text)
        label.color = Qt.binding(() => Theme.text)
        // The path bar sits under the title (the header's second item).
        const bar = label.parent.children[1]
        if (!bar || bar.upButton === undefined || !bar.background) return
        bar.background.color = Qt.binding(() => Theme.input)
        bar.background.border.color = Qt.binding(() => Theme.border)
        root.pathBar = bar
    }
}
