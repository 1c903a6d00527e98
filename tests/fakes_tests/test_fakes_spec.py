"""Validation of calls against api.min.json."""

import json

import pytest

from tests.fakes.spec import ApiError, FileRef, Spec


@pytest.fixture(scope="module")
def spec():
    return Spec.load()


def test_form_strings_are_coerced(spec):
    markup = json.dumps({"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]})
    p = spec.check_call(
        "sendMessage", {"chat_id": "-100", "text": "hi", "disable_notification": "true", "reply_markup": markup}
    )
    assert p["chat_id"] == -100 and p["disable_notification"] is True
    assert p["reply_markup"] == {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}


def test_json_typed_values(spec):
    p = spec.check_call("sendMessage", {"chat_id": "@channel", "text": "hi", "reply_markup": {"inline_keyboard": []}})
    assert p["chat_id"] == "@channel"


def test_missing_required(spec):
    with pytest.raises(ApiError) as e:
        spec.check_call("sendMessage", {"chat_id": 1})
    assert e.value.description == "Bad Request: message text is empty" and e.value.violation
    with pytest.raises(ApiError) as e:
        spec.check_call("answerCallbackQuery", {})
    assert e.value.code == 400


@pytest.mark.parametrize(
    "params",
    [
        {"chat_id": 1, "text": "x", "disable_notification": "maybe"},
        {"chat_id": 1, "text": "x", "message_thread_id": "abc"},
        {"chat_id": 1, "text": {"a": 1}},
        {"chat_id": 1, "text": "x", "reply_markup": "{not json"},
        {"chat_id": 1, "text": "x", "reply_markup": {"inline_keyboard": [[{"callback_data": "a"}]]}},
        {"chat_id": 1, "text": "x", "reply_markup": {"inline_keyboard": "nope"}},
        {"chat_id": True, "text": "x"},
    ],
)
def test_bad_types(spec, params):
    with pytest.raises(ApiError) as e:
        spec.check_call("sendMessage", params)
    assert e.value.code == 400 and e.value.description.startswith("Bad Request: ")


def test_unknown_parameters_and_fields_are_noted(spec):
    notes = []
    p = spec.check_call(
        "sendMessage",
        {
            "chat_id": 1,
            "text": "x",
            "colour": "red",
            "reply_markup": {"inline_keyboard": [[{"text": "a", "callback_data": "a", "x": 1}]]},
        },
        notes=notes,
    )
    assert "colour" not in p
    assert len(notes) == 2 and "colour" in notes[0] and "'x'" in notes[1]


def test_subtype_discriminator(spec):
    p = spec.check_call(
        "setMyCommands", {"commands": '[{"command":"a","description":"b"}]', "scope": '{"type":"chat","chat_id":-5}'}
    )
    assert p["scope"] == {"type": "chat", "chat_id": -5}
    with pytest.raises(ApiError):
        spec.check_call("setMyCommands", {"commands": "[]", "scope": '{"type":"galaxy"}'})
    with pytest.raises(ApiError):  # chat scope needs chat_id
        spec.check_call("setMyCommands", {"commands": "[]", "scope": '{"type":"chat"}'})


def test_input_file(spec):
    f = FileRef("a.txt", "text/plain", b"x")
    assert spec.check_call("sendDocument", {"chat_id": 1}, {"document": f})["document"] is f
    p = spec.check_call("sendDocument", {"chat_id": 1, "document": "attach://f1"}, {"f1": f})
    assert p["document"] is f
    assert spec.check_call("sendDocument", {"chat_id": 1, "document": "FILEID"})["document"] == "FILEID"


def test_check_object(spec):
    assert spec.check_object("User", {"id": 1, "is_bot": False, "first_name": "A"}) == []
    problems = spec.check_object("User", {"id": "1", "first_name": "A", "extra": 1})
    assert len(problems) == 3


def test_method_names_case_insensitive(spec):
    assert spec.canonical_method("SENDMESSAGE") == "sendMessage"
    assert spec.canonical_method("nope") is None
