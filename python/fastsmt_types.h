/* fastsmt_types.h — the types each file of the extension adds to the module fastsmt._fastsmt
 * (private to python/; called by fastsmt_module.c's module_exec). */
#ifndef FASTSMT_TYPES_H
#define FASTSMT_TYPES_H

#include "fastsmt_py.h"

/* fastsmt_decoder.c: PhraseTable and Decoder. */
int fastsmt_decoder_add_types(PyObject *module);
/* fastsmt_nmt.c: NMT. */
int fastsmt_nmt_add_type(PyObject *module);

#endif
