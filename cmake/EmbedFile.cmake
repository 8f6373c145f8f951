# Script mode: writes OUTPUT, a C++ file defining SYMBOL as the bytes of INPUT.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUTPUT}
  "// Generated from ${INPUT} by cmake/EmbedFile.cmake. Do not edit.\n"
  "extern const char ${SYMBOL}[];\nextern const unsigned long ${SYMBOL}_size;\n"
  "const char ${SYMBOL}[] = {${bytes} 0};\n"
  "const unsigned long ${SYMBOL}_size = ${size};\n")
