// The kernel calibration for cairn-cli's model commands (bench, generate,
// serve): `--calibrate` loads or measures the choice with the app's cache file
// (the data folder of `cairn`), `--kernel-cache FILE` with another file.
// Without either, the paths stay the default (by CPU features), so runs and
// tests are reproducible.
#pragma once

#include "command.h"

#include "cairn/kernel_calibration.h"

#include <optional>
#include <string>

namespace cairn::cli {

struct KernelSetup {
    std::optional<std::string> cacheFile;  // empty: no calibration
};

// Consumes --calibrate and --kernel-cache FILE.
KernelSetup kernelSetupFrom(Args& args);

// The app's cache file: $XDG_DATA_HOME/cairn/cairn/kernel-calibration.json
// (~/.local/share/... without XDG_DATA_HOME), as cairn's QStandardPaths data folder.
std::string defaultKernelCacheFile();

// Loads or measures with `threads` and applies the choice; tells stderr what it
// did in one line. Returns "default", "cache" or "measured" ("override" when
// CAIRN_KERNELS is set).
std::string setUpKernels(const KernelSetup& setup, int threads);

}  // namespace cairn::cli
