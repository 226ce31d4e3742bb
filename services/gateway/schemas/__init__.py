"""The JSON bodies the gateway's routes answer with, one module per resource.

Routes return the dicts their clients build and declare these as ``response_model``, so the
OpenAPI schema (``/docs``) shows every field while the body stays what it was: field order is
the dicts' key order, and the keys a body leaves out are left out (a default here, and
``response_model_exclude_unset`` on the route) rather than sent as null.
"""
