# cmake -DWHEELFIX=<binary> -DOUTPUT_DIR=<dir> -P Completions.cmake
# Writes <dir>/wheelfix.bash and <dir>/_wheelfix from `wheelfix completion bash|zsh`.
file(MAKE_DIRECTORY ${OUTPUT_DIR})
foreach(pair "bash;wheelfix.bash" "zsh;_wheelfix")
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND ${WHEELFIX} completion ${shell}
                  OUTPUT_FILE ${OUTPUT_DIR}/${name}.tmp
                  RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "wheelfix completion ${shell} failed (${status}): ${errors}")
  endif()
  file(RENAME ${OUTPUT_DIR}/${name}.tmp ${OUTPUT_DIR}/${name})
endforeach()
