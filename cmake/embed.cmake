# embed.cmake — writes a file's bytes as a C array: cmake -DIN=file -DOUT=file.c -P embed.cmake
# defines srv_page[] (NUL-terminated) and srv_page_len (without the NUL).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by cmake/embed.cmake */\n#include <stddef.h>\n"
  "const unsigned char srv_page[] = {\n${bytes}0x00};\nconst size_t srv_page_len = ${len};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
