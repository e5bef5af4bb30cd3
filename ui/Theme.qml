// Colours and metrics shared by every screen; `dark` switches the palette.
pragma Singleton
import QtQuick

QtObject {
    property bool dark: false

    readonly property color background: dark ? "#1d1e21" : "#ffffff"
    readonly property color sidebar: dark ? "#161719" : "#f5f6f8"
    readonly property color surface: dark ? "#2b2d31" : "#eef1f5"
    readonly property color hover: dark ? "#26282c" : "#e8ebf0"
    readonly property color selected: dark ? "#31343a" : "#dde3ec"
    readonly property color input: dark ? "#232428" : "#ffffff"
    readonly property color border: dark ? "#383a40" : "#d9dde3"
    readonly property color text: dark ? "#e8e9eb" : "#1f2328"
    readonly property color mutedText: dark ? "#a0a4ab" : "#5e6670"
    readonly property color accent: dark ? "#6ea8fe" : "#2563eb"
    readonly property color accentText: "#ffffff"
    // Behind a selected item in lists and dropdowns, under accentText (white):
    // the dark accent is too light for white text.
    readonly property color highlight: dark ? "#2f5db3" : "#2563eb"
    readonly property color codeBackground: dark ? "#111214" : "#f6f8fa"
    readonly property color warningBackground: dark ? "#3a3016" : "#fff4d6"
    readonly property color warningText: dark ? "#f3d27a" : "#7a5200"
    readonly property color errorBackground: dark ? "#3d1d1f" : "#fde8e8"
    readonly property color errorText: dark ? "#ffb4b4" : "#9b1c1c"

    readonly property int radius: 8
    readonly property int spacing: 8
    readonly property int contentWidth: 760
    readonly property string monoFamily: "monospace"
}
