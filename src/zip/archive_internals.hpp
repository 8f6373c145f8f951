// What the zip module's own writers need from an Archive and nobody else should
// see: the libzip handle (zip_source_zip copies members raw from it).
#pragma once

#include "wheelfix/zip/archive.hpp"

#include <zip.h>

namespace wheelfix::zip {

struct ArchiveInternals {
    static zip_t* libzip(const Archive& archive);
};

}  // namespace wheelfix::zip
