import QtQuick
import QtTest
import Cairn

// The theme switched while Settings is open re-styles it at once: its own
// title and the fields' palette follow the theme.
Item {
    width: 900
    height: 800

    SettingsDialog { id: dialog; controller: testController }

    TestCase {
        name: "SettingsDialog"
        when: windowShown

        function test_themeSwitchRestylesTheOpenDialog() {
            Theme.dark = false
            dialog.open()
            tryCompare(dialog, "opened", true)
            const title = findChild(dialog.header, "settingsTitle") || dialog.header
            compare(title.objectName, "settingsTitle")
            compare(title.text, "Settings")
            compare(title.color, Theme.text)
            compare(dialog.palette.base, Theme.input)
            Theme.dark = true
            compare(title.color, Qt.color("#e8e9eb"))
            compare(dialog.palette.base, Qt.color("#232428"))
            compare(dialog.palette.text, Qt.color("#e8e9eb"))
            // White text on the selection stays readable (contrast well above 3:1).
            verify(dialog.palette.highlight.hslLightness < 0.5)
            Theme.dark = false
            dialog.close()
        }

        // Every generation setting of the C++ table (generation_limits.h) has
        // its field in the panel, offering exactly the table's range.
        function test_fieldsOfferTheTablesRanges() {
            dialog.open()
            tryCompare(dialog, "opened", true)
            const limits = testController.settings.generationLimits
            const keys = Object.keys(limits)
            compare(keys.length, 11)
            for (const key of keys) {
                const field = findChild(dialog.contentItem, "setting_" + key)
                verify(field, key)
                const limit = limits[key]
                if (limit.integer) {
                    compare(field.from, limit.min, key)
                    compare(field.to, limit.max, key)
                } else {
                    compare(field.validator.bottom, limit.min, key)
                    compare(field.validator.top, limit.max, key)
                }
            }
            // The figures users see, as the per-conversation overrides refuse them.
            compare(findChild(dialog.contentItem, "setting_topK").to, 1000)
            compare(findChild(dialog.contentItem, "setting_maxTokens").to, 32768)
            dialog.close()
        }

        // More threads than CPUs: a note says how many the engine uses.
        function test_threadsNoteOnlyPastTheCpus() {
            const settings = testController.settings
            const before = settings.threads
            dialog.open()
            tryCompare(dialog, "opened", true)
            const note = findChild(dialog.contentItem, "threadsInEffect")
            verify(note)
            settings.threads = settings.cpuCount
            verify(!note.visible)
            settings.threads = settings.cpuCount + 1
            verify(note.visible)
            compare(note.text, "In effect: " + settings.cpuCount + ", the CPUs of this machine")
            settings.threads = before
            dialog.close()
        }

        // No model loaded: no "in effect" note.
        function test_contextNoteOnlyWhenCapped() {
            dialog.open()
            tryCompare(dialog, "opened", true)
            const note = findChild(dialog.contentItem, "contextInEffect")
            verify(note)
            verify(!note.visible)
            dialog.close()
        }
    }
}
