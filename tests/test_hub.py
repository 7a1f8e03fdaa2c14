"""ember.hub against torch.hub, offline: local hubconf directories, repositories and
checkpoints in the hub's cache, and clear errors (without touching the network) for what would
need a download."""
import hashlib
import os
import socket
import textwrap
import urllib.request
import zipfile

import numpy as np
import pytest
import torch
import torch.hub as thub

import ember
import ember.hub as ehub

HUBCONF = textwrap.dedent('''
    """A test repository."""
    dependencies = ["os", "json"]
    SIZE = 3  # not callable: not an entrypoint


    def scaled(values, factor=2):
        """Multiply each value by factor."""
        return [v * factor for v in values]


    def helper_sum(values):
        return sum(values)


    def _private():
        return None
''')


def _repo(directory, hubconf=HUBCONF):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "hubconf.py"), "w") as f:
        f.write(hubconf)
    return str(directory)


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory for torch and ember, restored afterwards."""
    monkeypatch.setattr(thub, "_hub_dir", None)
    monkeypatch.setattr(ehub, "_hub_dir", None)
    directory = tmp_path / "hub"
    directory.mkdir()
    thub.set_dir(str(directory))
    ehub.set_dir(str(directory))
    return directory


@pytest.fixture
def no_network(monkeypatch):
    """Any socket or urlopen use fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the network was used")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_load_local_matches_torch(tmp_path):
    repo = _repo(tmp_path / "repo")
    args = ("scaled", [1, 2])
    assert ehub.load(repo, *args, source="local", factor=3) == \
        thub.load(repo, *args, source="local", factor=3) == [3, 6]
    assert ehub.load(repo, "helper_sum", [1, 2], source="LOCAL") == 3


def test_load_local_builds_an_ember_model(tmp_path):
    repo = _repo(tmp_path / "models", textwrap.dedent('''
        dependencies = ["ember"]
        import ember

        def tiny(out_features=2):
            """A small linear model."""
            ember.manual_seed(0)
            return ember.nn.Linear(3, out_features)
    '''))
    model = ehub.load(repo, "tiny", source="local", out_features=4)
    assert isinstance(model, ember.nn.Linear) and model.out_features == 4
    assert repo not in os.sys.path


def test_cached_repository_list_help_load_match_torch(hub_dir, no_network):
    _repo(hub_dir / "someone_models_main")
    for lib in (thub, ehub):
        assert lib.list("someone/models:main", trust_repo=True, verbose=False) == [
            "helper_sum", "scaled"]
    assert ehub.help("someone/models:main", "scaled") == \
        thub.help("someone/models:main", "scaled", trust_repo=True) == \
        "Multiply each value by factor."
    assert ehub.load("someone/models:main", "scaled", [4], verbose=False) == [8]
    assert ehub.load("someone/models", "scaled", [4], verbose=False) == [8]  # main from cache
    # a repository already in the cache counts as trusted, and is not added to the list
    assert (hub_dir / "trusted_list").read_text() == ""


def test_cache_message(hub_dir, capsys):
    _repo(hub_dir / "pytorch_vision_v1")
    ehub.list("pytorch/vision:v1")
    assert f"Using cache found in {hub_dir / 'pytorch_vision_v1'}" in capsys.readouterr().err


def test_uncached_repository_names_the_url_without_the_network(hub_dir, no_network):
    with pytest.raises(RuntimeError, match="https://github.com/someone/models/zipball/v2"):
        ehub.load("someone/models:v2", "scaled")
    with pytest.raises(RuntimeError, match='"https://github.com/someone/other" has no cached'):
        ehub.list("someone/other")
    _repo(hub_dir / "someone_models_main")
    with pytest.raises(RuntimeError, match="force_reload=True"):
        ehub.help("someone/models:main", "scaled", force_reload=True)


def test_untrusted_repository_asks(hub_dir, monkeypatch):
    _repo(hub_dir / "someone_models_main")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository."):
        ehub.list("someone/models:main", trust_repo=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
    with pytest.raises(ValueError, match="Unrecognized response maybe."):
        ehub.list("someone/models:main", trust_repo=False)


@pytest.mark.parametrize("hubconf,call,exc", [
    (HUBCONF.replace('"json"]', '"json", "no_such_module_xyz"]'), ("scaled", [1]), RuntimeError),
    (HUBCONF, ("missing",), RuntimeError),
    (HUBCONF, ("SIZE",), RuntimeError),
    (HUBCONF, (3,), ValueError),
])
def test_bad_entrypoints_raise_as_torch(tmp_path, hubconf, call, exc):
    repo = _repo(tmp_path / "repo", hubconf)
    with pytest.raises(exc) as t_err:
        thub.load(repo, *call, source="local")
    with pytest.raises(exc) as e_err:
        ehub.load(repo, *call, source="local")
    assert str(e_err.value) == str(t_err.value)


def test_unknown_source_raises_as_torch(tmp_path):
    with pytest.raises(ValueError) as t_err:
        thub.load(str(tmp_path), "x", source="gitlab")
    with pytest.raises(ValueError) as e_err:
        ehub.load(str(tmp_path), "x", source="gitlab")
    assert str(e_err.value) == str(t_err.value)


def test_get_dir_and_set_dir_match_torch(monkeypatch, tmp_path):
    monkeypatch.setattr(thub, "_hub_dir", None)
    monkeypatch.setattr(ehub, "_hub_dir", None)
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert ehub.get_dir() == thub.get_dir() == os.path.expanduser("~/.cache/torch/hub")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ehub.get_dir() == thub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert ehub.get_dir() == thub.get_dir() == str(tmp_path / "th" / "hub")
    ehub.set_dir("~/somewhere")
    thub.set_dir("~/somewhere")
    assert ehub.get_dir() == thub.get_dir() == os.path.expanduser("~/somewhere")


def _torch_checkpoint(path):
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 2).state_dict()
    torch.save(state, path)
    return state


def _assert_same_state(e_state, t_state):
    assert list(e_state) == list(t_state)
    for key in t_state:
        np.testing.assert_array_equal(e_state[key].numpy(), t_state[key].numpy())


def test_load_state_dict_from_cached_checkpoint(hub_dir, no_network):
    checkpoints = hub_dir / "checkpoints"
    checkpoints.mkdir()
    state = _torch_checkpoint(checkpoints / "linear-1234abcd.pth")
    url = "https://download.example.org/models/linear-1234abcd.pth?raw=1"
    _assert_same_state(ehub.load_state_dict_from_url(url, check_hash=True), state)
    _assert_same_state(ember.utils.model_zoo.load_url(url, weights_only=True), state)
    other = hub_dir / "elsewhere"
    other.mkdir()
    _torch_checkpoint(other / "renamed.pt")
    _assert_same_state(ehub.load_state_dict_from_url(url, model_dir=str(other),
                                                     file_name="renamed.pt"), state)


def test_uncached_checkpoint_names_url_and_destination(hub_dir, no_network):
    url = "https://download.example.org/models/resnet-5c106cde.pth"
    with pytest.raises(RuntimeError) as err:
        ehub.load_state_dict_from_url(url)
    message = str(err.value)
    assert url in message and str(hub_dir / "checkpoints" / "resnet-5c106cde.pth") in message
    assert not os.listdir(hub_dir / "checkpoints")
    with pytest.raises(RuntimeError, match="http://example.org/x"):
        ehub.download_url_to_file("http://example.org/x", str(hub_dir / "x"))


def test_file_urls_are_copied_with_hash_check(hub_dir, tmp_path):
    source = tmp_path / "weights-abc.pth"
    state = _torch_checkpoint(source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    named = tmp_path / f"weights-{digest[:10]}.pth"
    os.rename(source, named)
    _assert_same_state(ehub.load_state_dict_from_url(named.as_uri(), check_hash=True), state)
    assert (hub_dir / "checkpoints" / named.name).exists()
    bad = tmp_path / "bad-0000aaaa.pth"
    bad.write_bytes(named.read_bytes())
    with pytest.raises(RuntimeError) as t_err:
        thub.download_url_to_file(bad.as_uri(), str(tmp_path / "t_copy"), hash_prefix="0000aaaa")
    with pytest.raises(RuntimeError) as e_err:
        ehub.download_url_to_file(bad.as_uri(), str(tmp_path / "e_copy"), hash_prefix="0000aaaa")
    assert str(e_err.value) == str(t_err.value)
    assert not (tmp_path / "e_copy").exists()
    ehub.download_url_to_file(named.as_uri(), str(tmp_path / "copy"), hash_prefix=digest[:8])
    assert (tmp_path / "copy").read_bytes() == named.read_bytes()


def test_legacy_zip_checkpoint(hub_dir):
    checkpoints = hub_dir / "checkpoints"
    checkpoints.mkdir()
    inner = hub_dir / "inner.pth"
    state = _torch_checkpoint(inner)
    with zipfile.ZipFile(checkpoints / "old.zip", "w") as zf:
        zf.write(inner, "inner.pth")
    with pytest.warns(FutureWarning, match="old format"):
        loaded = ehub.load_state_dict_from_url("https://example.org/old.zip")
    _assert_same_state(loaded, state)


def test_hub_names_reachable():
    assert ember.hub is ehub
    assert set(ehub.__all__) == {"download_url_to_file", "get_dir", "help", "list", "load",
                                 "load_state_dict_from_url", "set_dir"}
    assert ember.utils.model_zoo.load_url is ehub.load_state_dict_from_url
