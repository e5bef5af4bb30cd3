import QtQuick
import QtTest
import Cairn

Item {
    width: 400
    height: 300

    CodeBlock {
        id: block
        width: 360
        code: "int main() {\n    return 0;\n}"
        language: "cpp"
    }
    SignalSpy { id: copySpy; target: block; signalName: "copyRequested" }

    TestCase {
        name: "CodeBlock"
        when: windowShown

        function test_showsCodeAndCopies() {
            const body = findChild(block, "codeBody")
            verify(body)
            compare(body.text, block.code)
            verify(block.height > 3 * body.font.pixelSize)
            const button = findChild(block, "copyButton")
            verify(button)
            compare(button.text, "Copy")
            mouseClick(button)
            compare(copySpy.count, 1)
            compare(copySpy.signalArguments[0][0], block.code)
            compare(button.text, "Copied")
        }
    }
}
