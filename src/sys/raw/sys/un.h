/* SPDX-License-Identifier: MIT */
/* pith-tiny: <sys/un.h> for the code shared with the full build; see sys/arch/arch.h. */
#include "sys/arch/arch.h"
