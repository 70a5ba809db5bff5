from typing import ClassVar

from allauth.account.forms import SignupForm
from allauth.core import context
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.shortcuts import redirect
from django.utils.translation import gettext, gettext_lazy

from .models import ApiToken, ExpertProfile, Invitation, User
from .selectors import user_email_taken
from .services import invited_signup_save


class ServiceErrorsForm(forms.Form):
    """A form whose service may refuse the cleaned input: the service's errors land on the fields they name.

    Services raise `ValidationError({"field": [...]})`; `service_field` maps a service's name to the form's
    field (override it when they differ); errors on names the form does not have go on the form itself.
    """

    def service_field(self, name: str) -> str:
        return name

    def add_service_error(self, exc: ValidationError) -> None:
        if not hasattr(exc, "error_dict"):
            self.add_error(None, exc)
            return
        for name, errors in exc.error_dict.items():
            field = self.service_field(name)
            self.add_error(field if field in self.fields else None, errors)


class UserCreateForm(BaseUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "role")


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = ("email", "display_name", "role")


class InvitedSignupForm(SignupForm):
    """allauth's sign-up form, locked to the email address the invitation was sent to."""

    display_name = forms.CharField(max_length=150, required=False, label=gettext_lazy("Name as colleagues know you"))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].widget.attrs["readonly"] = "readonly"

    def _invitation(self) -> Invitation | None:
        from .adapter import session_invitation

        return session_invitation(context.request)

    def clean_email(self) -> str:
        email = super().clean_email()
        invitation = self._invitation()
        if invitation is None or invitation.email.lower() != (email or "").lower():
            raise forms.ValidationError(gettext("Sign up with the email address your invitation was sent to."))
        return email

    def save(self, request):
        # One transaction (the service's): when the invitation was used by a concurrent sign-up, no account is
        # left behind.
        return invited_signup_save(save=lambda: super(InvitedSignupForm, self).save(request),
                                   display_name=self.cleaned_data.get("display_name") or "")

    def try_save(self, request):
        try:
            return super().try_save(request)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
            return None, redirect("account_login")


class ProfileForm(forms.ModelForm):
    class Meta:
        model = ExpertProfile
        fields = ("degree", "institution", "languages", "qualifications")
        # The experts' own page: labels and help in the interface language (the model's texts serve the admin).
        labels: ClassVar[dict[str, object]] = {
            "degree": gettext_lazy("Degree"), "institution": gettext_lazy("Institution"),
            "languages": gettext_lazy("Languages"), "qualifications": gettext_lazy("Qualifications")}
        help_texts: ClassVar[dict[str, object]] = {
            "degree": gettext_lazy("Highest theological degree, e.g. M.Div., Th.D."),
            "institution": gettext_lazy("Awarding or current institution."),
            "languages": gettext_lazy("Comma-separated working languages, e.g. Greek, Hebrew, Latin."),
            "qualifications": gettext_lazy("Other qualifications: faculty or pastoral experience, publications.")}


class InvitationAdminForm(forms.ModelForm):
    class Meta:
        model = Invitation
        fields = ("email", "role", "tradition")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if user_email_taken(email=email):
            raise forms.ValidationError("This address already has an account.")
        return email


class ApiTokenCreateForm(ServiceErrorsForm):
    """Name, scopes and lifetime of a new API token (the service checks MFA and the limits)."""

    name = forms.CharField(max_length=100, label=gettext_lazy("Name"),
                           help_text=gettext_lazy("What the token is for, e.g. 'nightly report export'."))
    # The scopes' labels are messages (evaluations.domain.LABELS): shown in the interface language.
    scopes = forms.MultipleChoiceField(
        choices=[(value, gettext_lazy(label)) for value, label in ApiToken.Scope.choices],  # noqa: INT001
        widget=forms.CheckboxSelectMultiple, initial=[ApiToken.Scope.REPORTS_READ], label=gettext_lazy("Scopes"))
    days = forms.IntegerField(min_value=1, label=gettext_lazy("Valid for (days)"))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        days = self.fields["days"]
        days.initial = settings.ACCOUNTS_API_TOKEN_DAYS
        days.validators.append(MaxValueValidator(settings.ACCOUNTS_API_TOKEN_MAX_DAYS))
        days.widget.attrs["max"] = settings.ACCOUNTS_API_TOKEN_MAX_DAYS
