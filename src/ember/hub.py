"""``ember.hub``: load models from a directory with a ``hubconf.py`` and checkpoints from the
hub's cache, as torch.hub does.

ember never downloads: a repository that is not in the cache, a checkpoint that is not in the
cache, or any other URL but ``file://`` raises a RuntimeError naming the URL (and where to put
the file) before any connection is tried. The cache is torch's (``$TORCH_HOME/hub``), so what
torch has downloaded is found.
"""
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import warnings
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


def _no_download(url, dst=None):
    where = f" Put the file at {dst} to use it from the cache." if dst is not None else ""
    return RuntimeError(f'ember.hub does not download: "{url}" is not in the local cache.'
                        + where)


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_attr_from_module(module, func_name):
    if func_name not in dir(module):
        return None
    return getattr(module, func_name)


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    r"""Get the hub cache directory used for storing downloaded models & weights.

    If :func:`~ember.hub.set_dir` is not called, default path is ``$TORCH_HOME/hub`` where
    environment variable ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``.
    ``$XDG_CACHE_HOME`` follows the X Design Group specification of the Linux filesystem
    layout, with a default value ``~/.cache`` if the environment variable is not set.
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    r"""Optionally set the hub directory used to save downloaded models & weights.

    Args:
        d (str): path to a local folder to save downloaded models & weights.
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _parse_repo_info(github):
    """``(owner, name, ref)`` of ``"owner/name[:ref]"``; without a ref, the cached ``main`` or
    ``master`` (torch asks GitHub which exists)."""
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:
        for possible_ref in ("main", "master"):
            if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{possible_ref}"):
                return repo_owner, repo_name, possible_ref
        raise RuntimeError(
            f'ember.hub does not download: "https://github.com/{repo_owner}/{repo_name}" has '
            f"no cached copy in {get_dir()} (looked for {repo_owner}_{repo_name}_main and "
            f"{repo_owner}_{repo_name}_master)")
    return repo_owner, repo_name, ref


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The cached copy of the repository ``github`` (``<hub_dir>/owner_name_ref``)."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    if force_reload or not os.path.exists(repo_dir):
        url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"
        raise RuntimeError(f'ember.hub does not download: "{url}" (the repository '
                           f"{repo_owner}/{repo_name} at {ref}) is not in the local cache "
                           f"{repo_dir}" + (" and force_reload=True asks for a fresh copy"
                                            if force_reload else ""))
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if verbose:
        sys.stderr.write(f"Using cache found in {repo_dir}\n")
    return repo_dir


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(filepath):
        Path(filepath).touch()
    with open(filepath) as file:
        trusted_repos = tuple(line.strip() for line in file)
    # A repository already in the cache (downloaded before trust_repo existed) is trusted.
    trusted_repos_legacy = next(os.walk(hub_dir))[1]
    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = (owner_name in trusted_repos or owner_name_branch in trusted_repos_legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if (trust_repo is False) or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _check_dependencies(m):
    dependencies = _load_attr_from_module(m, VAR_DEPENDENCY)
    if dependencies is not None:
        missing_deps = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing_deps:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing_deps)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    r"""List all callable entrypoints available in the repo specified by ``github``.

    Args:
        github (str): a string with format "repo_owner/repo_name[:ref]" with an optional ref
            (tag or branch); the repository is read from the hub's cache.
        force_reload (bool, optional): whether to discard the existing cache and force a fresh
            download (which ember does not do: it raises). Default is ``False``.
        skip_validation (bool, optional): accepted for torch's signature.
        trust_repo (bool or str): ``"check"``, ``True`` or ``False``, as in torch.
        verbose (bool, optional): If ``False``, mute messages about hitting local caches.

    Returns:
        list: The available callables entrypoint
    """
    hub_module = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                               skip_validation=skip_validation))
    return [f for f in dir(hub_module)
            if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    r"""Show the docstring of entrypoint ``model``.

    Args:
        github (str): a string with format <repo_owner/repo_name[:ref]> with an optional ref
            (a tag or a branch); the repository is read from the hub's cache.
        model (str): a string of entrypoint name defined in repo's ``hubconf.py``
        force_reload, skip_validation, trust_repo: as in :func:`list`.
    """
    hub_module = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                               skip_validation=skip_validation))
    return _load_entry_from_hubconf(hub_module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    r"""Load a model from a github repo (in the hub's cache) or a local directory.

    If ``source`` is 'github', ``repo_or_dir`` is expected to be of the form
    ``repo_owner/repo_name[:ref]`` with an optional ref (a tag or a branch). If ``source`` is
    'local', ``repo_or_dir`` is expected to be a path to a local directory.

    Args:
        repo_or_dir (str): the repository, or the path to a local directory.
        model (str): the name of a callable (entrypoint) defined in the repo/dir's
            ``hubconf.py``.
        *args (optional): the corresponding args for callable ``model``.
        source (str, optional): 'github' or 'local'. Default is 'github'.
        trust_repo, force_reload, verbose, skip_validation: as in :func:`list`; no effect for
            ``source='local'``.
        **kwargs (optional): the corresponding kwargs for callable ``model``.

    Returns:
        The output of the ``model`` callable when called with the given ``*args`` and
        ``**kwargs``.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    r"""Copy the object at ``url`` to the local path ``dst``.

    Only ``file://`` URLs are read; any other raises a RuntimeError naming it, before any
    connection is tried (ember does not download).

    Args:
        url (str): URL of the object to download
        dst (str): Full path where object will be saved, e.g. ``/tmp/temporary_file``
        hash_prefix (str, optional): If not None, the SHA256 of the file should start with
            ``hash_prefix``. Default: None
        progress (bool, optional): accepted for torch's signature.
    """
    dst = os.path.expanduser(dst)
    parts = urlparse(url)
    if parts.scheme != "file":
        raise _no_download(url, dst)
    src = unquote(parts.path)
    if hash_prefix is not None:
        sha256 = hashlib.sha256()
        with open(src, "rb") as f:
            for buffer in iter(lambda: f.read(READ_DATA_CHUNK), b""):
                sha256.update(buffer)
        digest = sha256.hexdigest()
        if digest[:len(hash_prefix)] != hash_prefix:
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
    partial = f"{dst}.{os.getpid()}.partial"
    shutil.copyfile(src, partial)
    shutil.move(partial, dst)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as ember_load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        f.extractall(model_dir)
        extracted_file = os.path.join(model_dir, members[0].filename)
    return ember_load(extracted_file, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    r"""Loads the serialized object at the given URL from the hub's cache.

    If the object is already present in ``model_dir``, it's deserialized and returned; a
    ``file://`` URL is copied there first; anything else raises a RuntimeError naming the URL
    and the path where the file is expected. A zip file holding one file (the format before
    torch 1.6) is decompressed.

    The default value of ``model_dir`` is ``<hub_dir>/checkpoints`` where ``hub_dir`` is the
    directory returned by :func:`~ember.hub.get_dir`.

    Args:
        url (str): URL of the object to download
        model_dir (str, optional): directory in which to save the object
        map_location (optional): a function or a dict specifying how to remap storage
            locations (see ember.load)
        progress (bool, optional): accepted for torch's signature.
        check_hash(bool, optional): If True, the filename part of the URL should follow the
            naming convention ``filename-<sha256>.ext`` where ``<sha256>`` is the first eight
            or more digits of the SHA256 hash of the contents of the file (checked when the
            file is copied into the cache). Default: False
        file_name (str, optional): name for the downloaded file. Filename from ``url`` will be
            used if not set.
        weights_only(bool, optional): If True, only weights will be loaded and no complex
            pickled objects. See :func:`~ember.load`.
    """
    from .serialization import load as ember_load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path)
    if file_name is not None:
        filename = file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return ember_load(cached_file, map_location=map_location, weights_only=weights_only)
