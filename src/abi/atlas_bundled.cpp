// Atlas::bundled(): data/torch-atlas.gz compiled into the binary with the
// assembler's .incbin (an 8 MB file as a C array would cost minutes of compiling),
// parsed on first use. CMakeLists.txt defines WHEELFIX_ATLAS_FILE when the file exists.
#include "wheelfix/abi/atlas.hpp"

#if defined(WHEELFIX_ATLAS_FILE)
__asm__(".pushsection .rodata\n"
        ".balign 16\n"
        ".global wheelfix_torch_atlas\n"
        "wheelfix_torch_atlas:\n"
        ".incbin \"" WHEELFIX_ATLAS_FILE "\"\n"
        ".global wheelfix_torch_atlas_end\n"
        "wheelfix_torch_atlas_end:\n"
        ".popsection\n");
extern "C" const char wheelfix_torch_atlas[];
extern "C" const char wheelfix_torch_atlas_end[];
#endif

namespace wheelfix::abi {

const Atlas& Atlas::bundled() {
    static const Atlas atlas = [] {
#if defined(WHEELFIX_ATLAS_FILE)
        return Atlas::parse({wheelfix_torch_atlas, static_cast<std::size_t>(wheelfix_torch_atlas_end - wheelfix_torch_atlas)},
                            "bundled torch atlas");
#else
        return Atlas();
#endif
    }();
    return atlas;
}

}  // namespace wheelfix::abi
