from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm

from .models import User


class UserCreateForm(BaseUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "role")


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = ("email", "display_name", "role")
