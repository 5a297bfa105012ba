# man_page.cmake — one man page from the tool's own help (cmake -P, at build time):
#   -DHELP2MAN=... -DANDREA=path/to/andrea -DCMD=info|"" -DOUT=andrea-info.1
# CMD "" makes andrea.1 from `andrea --help`; otherwise andrea-CMD.1 from `andrea CMD --help`,
# titled ANDREA-CMD and named with the command's one-line summary from `andrea --help`.
execute_process(COMMAND "${ANDREA}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page: ${ANDREA} --help failed")
endif()
if(CMD STREQUAL "")
  set(summary "attention-head interpretability for GPT-2 architecture models")
  set(helpopt "--help")
else()
  string(REGEX MATCH "\n  ${CMD} +([^\n]*)" m "${top}")
  set(summary "${CMAKE_MATCH_1}")
  if(summary STREQUAL "")
    set(summary "the ${CMD} command of andrea")
  endif()
  set(helpopt "${CMD} --help")
endif()
execute_process(COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section=1 "--name=${summary}"
                        "--help-option=${helpopt}" --version-option=--version --output=${OUT}.tmp "${ANDREA}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page: help2man failed for '${helpopt}'")
endif()
file(READ "${OUT}.tmp" page)
file(REMOVE "${OUT}.tmp")
if(NOT CMD STREQUAL "")
  string(TOUPPER "${CMD}" up)
  string(REPLACE ".TH ANDREA " ".TH ANDREA-${up} " page "${page}")
  string(REPLACE "\nandrea \\- " "\nandrea-${CMD} \\- " page "${page}")
endif()
file(WRITE "${OUT}" "${page}")
