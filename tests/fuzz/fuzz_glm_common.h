/* fuzz_glm_common.h — queries run on every model the glm harnesses manage to open. */
#ifndef FUZZ_GLM_COMMON_H
#define FUZZ_GLM_COMMON_H

#include "glm.h"

/* Scores the model's words (up to a bound) one after another from <s> with glm_score and
 * glm_score_ref, and the same n-grams as rows with glm_score_rows and glm_score_rows_ref.
 * strict (a model glm_build just wrote): the fast paths must give the reference's results bit for
 * bit and a row the score of the state walk (glm.h), else fz_fail. A damaged model that passes
 * GLM_OPEN_VERIFY is only promised to be read in bounds (its keys may be out of order, its
 * n-grams without their contexts), so it is only queried. */
void fz_glm_exercise(const glm_model *m, int strict);

#endif
