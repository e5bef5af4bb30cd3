# The Debian package: `cpack -G DEB` (or `cpack --config CPackConfig.cmake`) in
# the build tree writes cairn_<version>_<arch>.deb.
#
# Depends = what dpkg-shlibdeps finds for the installed binaries (Qt 6 core/gui/
# qml/quick/controls libraries, SQLite, sentencepiece, PCRE2, xxHash,
# libstdc++ ...) plus the QML modules ui/ imports (directly or through Qt's own QML), which are
# plugins loaded at run time and so invisible to shlibdeps. Runtime packages only, never -dev.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cairn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Cairn developers")
set(CPACK_PACKAGE_CONTACT "The Cairn developers <cairn-chat@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/cairn-chat/cairn")
# The extended description; CPack puts the summary line above it and indents it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Cairn is a desktop chat application for local language models. It runs
GGUF models (memory-mapped, quantized) on the CPU with an inference engine
of its own, keeps conversations in a local SQLite database and resumes each
conversation from its saved engine state. Also contains cairn-cli, the
engine's command-line front end.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CAIRN_QML_RUNTIME_PACKAGES
    qml6-module-qtquick
    qml6-module-qtquick-controls
    qml6-module-qtquick-templates
    qml6-module-qtquick-layouts
    qml6-module-qtquick-dialogs
    qml6-module-qt-labs-folderlistmodel  # the QML FileDialog (no native dialog) imports it
    qml6-module-qtqml-workerscript)
list(JOIN CAIRN_QML_RUNTIME_PACKAGES ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
