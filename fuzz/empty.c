typedef int eo_empty_unit; /* TEMPORARY: lets empty module dirs build */
