/* SPDX-License-Identifier: MIT */
/* pith-tiny: <stdlib.h> for the code shared with the full build; see sys/arch/arch.h. */
#include "sys/arch/arch.h"

int atoi(const char *s);    /* src/sys/fmt_raw.c */
_Noreturn void abort(void); /* src/sys/rt_raw.c */
