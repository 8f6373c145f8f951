# wheelfix_embed(<target> <symbol> <file>): compiles <file> into <target> as
#   extern const char <symbol>[]; extern const unsigned long <symbol>_size;
# so data files (policies, profiles) ship inside the binary and need no install path.
function(wheelfix_embed target symbol file)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${file} -DOUTPUT=${out} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE ${out})
  # A byte array has no headers to share: kept out of unity batches (CMakeLists.txt).
  set_source_files_properties(${out} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
