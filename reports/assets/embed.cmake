# embed.cmake — turns the report's browser assets (reports/assets/*.js, *.css) into C arrays, so the
# installed binary carries them and writes them beside every page it makes (no asset folder to find
# at run time). Run by the build:  cmake -DOUT=report_assets.c -DINPUTS="a.js;b.css" -P embed.cmake
set(body "/* report_assets.c — GENERATED from reports/assets/ by reports/assets/embed.cmake. Do not edit. */\n")
string(APPEND body "#include \"reports/report_assets.h\"\n\n")
set(entries "")
foreach(f ${INPUTS})
  get_filename_component(name "${f}" NAME)
  string(MAKE_C_IDENTIFIER "asset_${name}" id)
  file(READ "${f}" hex HEX)
  string(LENGTH "${hex}" hl)
  math(EXPR n "${hl} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," arr "${hex}")
  string(APPEND body "static const unsigned char ${id}[] = {${arr}0};\n")
  string(APPEND entries "    {\"${name}\", ${id}, ${n}},\n")
endforeach()
string(APPEND body "\nconst report_asset andrea_report_assets[] = {\n${entries}    {0, 0, 0}};\n")
file(WRITE "${OUT}.tmp" "${body}")
file(RENAME "${OUT}.tmp" "${OUT}")
