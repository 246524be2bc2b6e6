"""Stand-ins for modules that KernelBench's package imports but never uses
in evaluation, and that the GPU machine's image lacks (dotenv, openai,
litellm: the LLM client side; pydantic: KernelExecResult's base class).

They are put in sys.modules only when the real module cannot be imported,
so the harness's own code runs unmodified.  Nothing here is used to judge
anything: the stand-in BaseModel only stores the fields it is given.
"""
import copy
import importlib
import sys
import types


def _missing(name):
    try:
        importlib.import_module(name)
        return False
    except Exception:
        return True


class _BaseModel:
    """Fields from the class annotations, defaults copied; keyword arguments set them."""

    def __init__(self, **kw):
        for cls in reversed(type(self).__mro__):
            for field in getattr(cls, "__annotations__", {}):
                if hasattr(cls, field):
                    setattr(self, field, copy.deepcopy(getattr(cls, field)))
        for key, value in kw.items():
            setattr(self, key, value)

    def model_dump(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    dict = model_dump

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in self.model_dump().items()))


def install():
    if _missing("dotenv"):
        sys.modules["dotenv"] = types.SimpleNamespace(load_dotenv=lambda *a, **k: False)
    if _missing("openai"):
        sys.modules["openai"] = types.SimpleNamespace(OpenAI=object)
    if _missing("litellm"):
        sys.modules["litellm"] = types.SimpleNamespace(completion=None)
    if _missing("pydantic"):
        sys.modules["pydantic"] = types.SimpleNamespace(BaseModel=_BaseModel)
